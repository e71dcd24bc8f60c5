package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.device.EngineBuffer.Root;
import io.reactiverdma.reactive.impl.verbs.Registration;

import java.nio.ByteBuffer;
import java.util.Collections;

/** A chunk handed out. */
public final class PooledBuffer extends Root {
    private final BufferPool pool;
    private final BufferPool.Chunk chunk;
    private final int length;

    PooledBuffer(BufferPool pool, BufferPool.Chunk chunk, int length) {
        super(Collections.emptySet());
        this.pool = pool;
        this.chunk = chunk;
        this.length = length;
    }

    @Override
    public ByteBuffer memory() {
        return chunk.slab().memory;
    }

    @Override
    public int offset() {
        return chunk.offset();
    }

    @Override
    public long address() {
        return chunk.slab().registration.address() + chunk.offset();
    }

    @Override
    public int lkey() {
        return chunk.slab().registration.lkey();
    }

    @Override
    public int rkey() {
        return chunk.slab().registration.rkey();
    }

    @Override
    public Registration registration() {
        return chunk.slab().registration;
    }

    @Override
    public BufferPool pool() {
        return pool;
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public void free() {
        pool.recycle(chunk);
    }

    @Override
    public String toString() {
        return "pooled RegisteredBuffer{" + length + " bytes" + (isReleased() ? ", released" : "") + "}";
    }
}
