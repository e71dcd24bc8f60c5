package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.reactive.RemoteAccess;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A host stand-in for the protection domain: records every register/deregister call and hands out fake
 * native addresses (distinct, 4 KiB aligned) and keys. Thread-safe.
 */
public final class FakeRegistrar implements BufferPool.Registrar {
    static final long BASE_ADDRESS = 0x7f00_0000_0000L;

    /** One fake {@code ibv_mr}. */
    static final class FakeRegistration implements Registration {
        final ByteBuffer buffer;
        final Set<RemoteAccess> access;
        final long address;
        final int lkey;
        final int rkey;
        final AtomicInteger deregistrations = new AtomicInteger();
        volatile RuntimeException failOnDeregister;
        /** Runs inside deregister (a slow one, in tests). */
        volatile Runnable onDeregister;

        FakeRegistration(ByteBuffer buffer, Set<RemoteAccess> access, long address, int lkey, int rkey) {
            this.buffer = buffer;
            this.access = access;
            this.address = address;
            this.lkey = lkey;
            this.rkey = rkey;
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public int lkey() {
            return lkey;
        }

        @Override
        public int rkey() {
            return rkey;
        }

        @Override
        public void deregister() {
            Runnable r = onDeregister;
            if (r != null) {
                r.run();
            }
            deregistrations.incrementAndGet();
            RuntimeException f = failOnDeregister;
            if (f != null) {
                throw f;
            }
        }
    }

    private final List<FakeRegistration> registrations = new ArrayList<>();
    private long nextAddress = BASE_ADDRESS;
    private int nextKey = 0x100;
    /** When set, the next register call throws it (once). */
    volatile RuntimeException failNextRegister;

    @Override
    public synchronized Registration register(ByteBuffer directBuffer, Set<RemoteAccess> remoteAccess) {
        RuntimeException f = failNextRegister;
        if (f != null) {
            failNextRegister = null;
            throw f;
        }
        if (!directBuffer.isDirect()) {
            throw new AssertionError("BufferPool registered a heap buffer");
        }
        EnumSet<RemoteAccess> access = remoteAccess.isEmpty() ? EnumSet.noneOf(RemoteAccess.class)
                : EnumSet.copyOf(remoteAccess);
        FakeRegistration r = new FakeRegistration(directBuffer, access, nextAddress, nextKey, nextKey + 1);
        // Leave a gap after each registration so address ranges never touch.
        nextAddress += ((long) directBuffer.capacity() + 0x1fffL) & ~0xfffL;
        nextKey += 2;
        registrations.add(r);
        return r;
    }

    synchronized List<FakeRegistration> registrations() {
        return new ArrayList<>(registrations);
    }

    synchronized FakeRegistration last() {
        return registrations.get(registrations.size() - 1);
    }

    synchronized int registerCalls() {
        return registrations.size();
    }

    /** Registrations whose deregister was called at least once. */
    synchronized long deregistered() {
        return registrations.stream().filter(r -> r.deregistrations.get() > 0).count();
    }
}
