package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.verbs.AccessFlags;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The stack's memory keys: every registration gets a fake address range (page aligned, never overlapping,
 * never reused) and an lkey and an rkey that differ from each other and from every other registration's
 * (never reused either, so a stale key always fails). Lookups check the protection domain, the range and the
 * access. Guarded by the stack's fabric lock.
 */
final class LoopbackMemory {
    private static final long PAGE = 4096;
    private final LoopbackStack stack;
    private final Map<Integer, LoopbackRegistration> byLkey = new HashMap<>();
    private final Map<Integer, LoopbackRegistration> byRkey = new HashMap<>();
    private final TreeMap<Long, LoopbackRegistration> byAddress = new TreeMap<>();
    /** Windows by their rkey's 24-bit index (the key byte changes with every bind). */
    private final Map<Integer, LoopbackWindow> windowsByIndex = new HashMap<>();
    private final Map<Long, LoopbackWindow> windowsByHandle = new HashMap<>();
    private long nextWindowHandle = 0x5100_0000L;
    private long nextAddress = 0x7f10_0000_0000L;
    private int nextIndex = 1;
    /**
     * Registrations and windows by their keys' 24-bit index, copied on every change so that the zero-cost
     * path ({@link ZeroCostQueuePair}) reads it without the lock and without boxing a key.
     */
    private volatile Object[] byIndex = new Object[64];

    LoopbackMemory(LoopbackStack stack) {
        this.stack = stack;
    }

    /** Fabric lock held. */
    LoopbackRegistration add(LoopbackProtectionDomain pd, java.nio.ByteBuffer buffer, int access) {
        int index = nextIndex++;
        long address = nextAddress;
        long span = (buffer.capacity() + PAGE - 1) / PAGE * PAGE;
        nextAddress += span + PAGE; // a guard page between registrations
        int lkey = index << 8 | 0x11;
        int rkey = index << 8 | 0x22;
        LoopbackRegistration r = new LoopbackRegistration(stack, pd, buffer, address, lkey, rkey, access);
        byLkey.put(lkey, r);
        byRkey.put(rkey, r);
        byAddress.put(address, r);
        index(index, r);
        return r;
    }

    /** A type 2 window, unbound, with a fresh index. Fabric lock held. */
    LoopbackWindow addWindow(LoopbackProtectionDomain pd) {
        int index = nextIndex++;
        LoopbackWindow w = new LoopbackWindow(stack, pd, nextWindowHandle += 64, index << 8 | 0x33);
        windowsByIndex.put(index, w);
        windowsByHandle.put(w.handle, w);
        index(index, w);
        return w;
    }

    /** Fabric lock held. */
    void removeWindow(LoopbackWindow w) {
        windowsByIndex.remove(w.rkey >>> 8);
        windowsByHandle.remove(w.handle);
        index(w.rkey >>> 8, null);
    }

    /** Fabric lock held. */
    LoopbackWindow window(long handle) {
        return windowsByHandle.get(handle);
    }

    /** The window whose current rkey is {@code rkey}. Fabric lock held. */
    LoopbackWindow windowByRkey(int rkey) {
        LoopbackWindow w = windowsByIndex.get(rkey >>> 8);
        return w != null && w.rkey == rkey ? w : null;
    }

    /** The live registration whose address (its handle in a BIND_MW request) is {@code address}. */
    LoopbackRegistration registrationAt(long address) {
        return byAddress.get(address);
    }

    /** Whether a window is bound to {@code r}. Fabric lock held. */
    boolean hasWindowsOn(LoopbackRegistration r) {
        for (LoopbackWindow w : windowsByIndex.values()) {
            if (w.region == r) {
                return true;
            }
        }
        return false;
    }

    /** The QP is destroyed: the type 2 windows bound to it are invalid. Fabric lock held. */
    void invalidateWindowsOf(LoopbackQueuePair qp) {
        for (LoopbackWindow w : windowsByIndex.values()) {
            if (w.boundQp == qp) {
                w.invalidate();
            }
        }
    }

    /** Fabric lock held. */
    void remove(LoopbackRegistration r) {
        byLkey.remove(r.lkey());
        byRkey.remove(r.rkey());
        byAddress.remove(r.address());
        index(r.lkey() >>> 8, null);
    }

    /** Fabric lock held. */
    private void index(int index, Object o) {
        Object[] a = byIndex;
        a = index < a.length ? a.clone() : java.util.Arrays.copyOf(a, Math.max(index + 1, a.length * 2));
        a[index] = o;
        byIndex = a;
    }

    /** The live registration whose lkey is {@code lkey}, or null. Any thread, no lock (the zero-cost path). */
    LoopbackRegistration byLkeyUnlocked(int lkey) {
        Object[] a = byIndex;
        int i = lkey >>> 8;
        return i < a.length && a[i] instanceof LoopbackRegistration r && r.lkey() == lkey ? r : null;
    }

    /**
     * What a remote request's rkey grants on {@code responder} for [addr, addr+len) with {@code access}: the
     * registration it reaches (directly, or through a window bound to {@code responder}), or null. Any
     * thread, no lock (the zero-cost path; a window is bound and invalidated under the lock, read here).
     */
    LoopbackRegistration remoteUnlocked(LoopbackQueuePair responder, int rkey, long addr, long len, int access) {
        Object[] a = byIndex;
        int i = rkey >>> 8;
        Object o = i < a.length ? a[i] : null;
        if (o instanceof LoopbackRegistration r) {
            return r.rkey() == rkey && r.pd == responder.pd && addr >= r.address()
                    && addr + len <= r.address() + r.length() && (r.access & access) == access ? r : null;
        }
        if (o instanceof LoopbackWindow w) {
            LoopbackRegistration region = w.region;
            return region != null && w.rkey == rkey && w.boundQp == responder && addr >= w.address
                    && addr + len <= w.address + w.length && (w.access & access) == access ? region : null;
        }
        return null;
    }

    /** What a local SGE check found. */
    enum Check { OK, BAD_KEY, OUT_OF_RANGE, NO_ACCESS }

    /**
     * The registration an SGE names by lkey in {@code pd}, when [addr, addr+len) lies in it and it grants
     * {@code access} (0 for reading). Fabric lock held.
     */
    LoopbackRegistration local(LoopbackProtectionDomain pd, int lkey, long addr, long len, int access, Check[] why) {
        return find(byLkey.get(lkey), pd, addr, len, access, why);
    }

    /**
     * The same for an rkey of a remote request arriving on {@code responder}: a registration's rkey, or a
     * window's, which is valid only on the QP it is bound to, in its range and for its access. Fabric lock held.
     */
    LoopbackRegistration remote(LoopbackQueuePair responder, int rkey, long addr, long len, int access, Check[] why) {
        LoopbackRegistration r = byRkey.get(rkey);
        if (r != null) {
            return find(r, responder.pd, addr, len, access, why);
        }
        LoopbackWindow w = windowsByIndex.get(rkey >>> 8);
        if (w == null || !w.isBound() || w.rkey != rkey || w.boundQp != responder) {
            why[0] = Check.BAD_KEY;
            return null;
        }
        if (len < 0 || addr < w.address || addr + len > w.address + w.length) {
            why[0] = Check.OUT_OF_RANGE;
            return null;
        }
        if ((w.access & access) != access) {
            why[0] = Check.NO_ACCESS;
            return null;
        }
        why[0] = Check.OK;
        return w.region;
    }

    private static LoopbackRegistration find(LoopbackRegistration r, LoopbackProtectionDomain pd, long addr, long len,
            int access, Check[] why) {
        if (r == null || r.pd != pd) {
            why[0] = Check.BAD_KEY;
            return null;
        }
        if (len < 0 || addr < r.address() || addr + len > r.address() + r.length()) {
            why[0] = Check.OUT_OF_RANGE;
            return null;
        }
        if ((r.access & access) != access) {
            why[0] = Check.NO_ACCESS;
            return null;
        }
        why[0] = Check.OK;
        return r;
    }

    /**
     * The live registration containing [addr, addr+len), whatever its key: what the CPU reads for an inline
     * send (the device copies inline data from the virtual address, no key involved). Fabric lock held.
     */
    LoopbackRegistration containing(long addr, long len) {
        Map.Entry<Long, LoopbackRegistration> e = byAddress.floorEntry(addr);
        if (e == null) {
            return null;
        }
        LoopbackRegistration r = e.getValue();
        return addr + len <= r.address() + r.length() ? r : null;
    }

    static boolean validAccess(int access) {
        return (access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) == 0
                || (access & AccessFlags.LOCAL_WRITE) != 0;
    }
}
