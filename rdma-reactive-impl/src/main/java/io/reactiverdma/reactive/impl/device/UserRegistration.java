package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.device.EngineBuffer.Root;
import io.reactiverdma.reactive.impl.verbs.Registration;

import java.nio.ByteBuffer;
import java.util.Set;

/** Memory the user registered. */
final class UserRegistration extends Root {
    private final BufferPool pool;
    private final ByteBuffer memory;
    final Registration registration;

    UserRegistration(BufferPool pool, ByteBuffer memory, Registration registration, Set<RemoteAccess> access) {
        super(access);
        this.pool = pool;
        this.memory = memory;
        this.registration = registration;
    }

    @Override
    public ByteBuffer memory() {
        return memory;
    }

    @Override
    public int offset() {
        return 0;
    }

    @Override
    public long address() {
        return registration.address();
    }

    @Override
    public int lkey() {
        return registration.lkey();
    }

    @Override
    public int rkey() {
        return registration.rkey();
    }

    @Override
    public Registration registration() {
        return registration;
    }

    @Override
    public BufferPool pool() {
        return pool;
    }

    @Override
    public int length() {
        return memory.capacity();
    }

    @Override
    public void free() {
        pool.deregistered(this);
    }

    @Override
    public String toString() {
        return "registered RegisteredBuffer{" + length() + " bytes, remote " + access
                + (isReleased() ? ", released" : "") + "}";
    }
}
