package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;

import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A protection domain: its registrations and queue pairs must be gone before it is closed (else EBUSY). */
public final class LoopbackProtectionDomain implements ProtectionDomain {
    final LoopbackStack stack;
    final LoopbackDevice device;
    final Set<LoopbackRegistration> registrations = ConcurrentHashMap.newKeySet();
    final Set<LoopbackQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
    final Set<LoopbackWindow> windows = ConcurrentHashMap.newKeySet();
    final Set<LoopbackSharedReceiveQueue> srqs = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    LoopbackProtectionDomain(LoopbackDevice device) {
        this.stack = device.stack;
        this.device = device;
        device.resources.add(LoopbackResources.Kind.PROTECTION_DOMAIN, this, toString());
    }

    @Override
    public Registration register(ByteBuffer directBuffer, int accessFlags) {
        if (closed) {
            throw Errnos.fail("ibv_reg_mr", Errnos.EINVAL, "the protection domain was deallocated");
        }
        if (directBuffer == null || !directBuffer.isDirect()) {
            throw new IllegalArgumentException("ibv_reg_mr: a direct ByteBuffer is required");
        }
        if (!LoopbackMemory.validAccess(accessFlags)) {
            throw Errnos.fail("ibv_reg_mr", Errnos.EINVAL, AccessFlags.describe(accessFlags)
                    + ": REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE");
        }
        LoopbackRegistration r;
        synchronized (stack.lock) {
            r = stack.memory.add(this, directBuffer, accessFlags);
            registrations.add(r);
        }
        device.resources.add(LoopbackResources.Kind.REGISTRATION, r, r.toString());
        device.resources.bytes(r.length());
        return r;
    }

    @Override
    public LoopbackSharedReceiveQueue createSharedReceiveQueue(int maxWr) {
        if (closed) {
            throw Errnos.fail("ibv_create_srq", Errnos.EINVAL, "the protection domain was deallocated");
        }
        if (maxWr < 1 || maxWr > device.maxSrqWr()) {
            throw Errnos.fail("ibv_create_srq", Errnos.EINVAL, maxWr + " work requests (max_srq_wr " + device.maxSrqWr() + ")");
        }
        LoopbackSharedReceiveQueue q = new LoopbackSharedReceiveQueue(this, maxWr);
        srqs.add(q);
        return q;
    }

    @Override
    public MemoryWindow allocateWindow() {
        if (closed) {
            throw Errnos.fail("ibv_alloc_mw", Errnos.EINVAL, "the protection domain was deallocated");
        }
        if (!stack.memoryWindows) {
            throw Errnos.fail("ibv_alloc_mw", Errnos.EOPNOTSUPP, device.name() + " has no memory windows");
        }
        LoopbackWindow w;
        synchronized (stack.lock) {
            w = stack.memory.addWindow(this);
            windows.add(w);
        }
        device.resources.add(LoopbackResources.Kind.MEMORY_WINDOW, w, w.toString());
        return w;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        srqs.removeIf(LoopbackSharedReceiveQueue::isDestroyed);
        if (!srqs.isEmpty()) {
            throw Errnos.fail("ibv_dealloc_pd", Errnos.EBUSY, srqs.size() + " shared receive queues still use " + this);
        }
        if (!registrations.isEmpty() || !queuePairs.isEmpty() || !windows.isEmpty()) {
            throw Errnos.fail("ibv_dealloc_pd", Errnos.EBUSY, registrations.size() + " registrations, "
                    + queuePairs.size() + " queue pairs and " + windows.size() + " memory windows still use " + this);
        }
        closed = true;
        device.resources.remove(LoopbackResources.Kind.PROTECTION_DOMAIN, this);
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "pd@" + device.name() + "#" + Integer.toHexString(System.identityHashCode(this));
    }
}
