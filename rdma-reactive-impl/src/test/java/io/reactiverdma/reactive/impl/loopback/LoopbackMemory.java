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
    private long nextAddress = 0x7f10_0000_0000L;
    private int nextIndex = 1;

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
        return r;
    }

    /** Fabric lock held. */
    void remove(LoopbackRegistration r) {
        byLkey.remove(r.lkey());
        byRkey.remove(r.rkey());
        byAddress.remove(r.address());
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

    /** The same for an rkey of a remote request. Fabric lock held. */
    LoopbackRegistration remote(LoopbackProtectionDomain pd, int rkey, long addr, long len, int access, Check[] why) {
        return find(byRkey.get(rkey), pd, addr, len, access, why);
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
