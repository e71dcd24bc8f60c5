package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's {@link RegisteredBuffer}: a range of a registration (address, lkey, rkey) with a hold count.
 * The owner holds one; every posted operation that uses the range holds one more until its completion. The
 * memory is freed (back to the pool, or deregistered) when the owner released it and the last hold is gone.
 */
public abstract class EngineBuffer implements RegisteredBuffer {
    /** The root's view of the whole registration range, native order. */
    public abstract ByteBuffer memory();

    /**
     * A read-only view of the whole registration range, made once per registration: a message's {@code data()}
     * is one slice of it (read-only and big-endian as every slice is), not a slice and then a read-only copy.
     */
    public final ByteBuffer readOnlyMemory() {
        return root().readOnlyView();
    }

    /** Offset of this range in {@link #memory()}. */
    public abstract int offset();

    public abstract long address();

    public abstract int lkey();

    abstract int rkey();

    /** The registration the range belongs to (what a memory window is bound onto). */
    public abstract io.reactiverdma.reactive.impl.verbs.Registration registration();

    /** The pool (device) the registration belongs to. */
    public abstract BufferPool pool();

    public abstract Root root();

    /** Takes a hold for an operation; false when the root was released already. */
    public final boolean retain() {
        return root().retainRoot();
    }

    /** Drops a hold taken by {@link #retain()}. */
    public final void unretain() {
        root().unretainRoot();
    }

    @Override
    public ByteBuffer buffer() {
        if (root().isReleased()) {
            throw released();
        }
        return memory().slice(offset(), length()).order(ByteOrder.BIG_ENDIAN);
    }

    @Override
    public RegisteredBuffer slice(int offset, int length) {
        if (offset < 0 || length < 0 || offset > length() || length > length() - offset) {
            throw new InvalidRequestException(InvalidRequestException.Reason.OUTSIDE_REGION,
                    "slice [" + offset + ", " + offset + " + " + length + ") outside the " + length()
                            + "-byte registered buffer");
        }
        return new Slice(root(), offset() + offset, length);
    }

    @Override
    public Set<RemoteAccess> remoteAccess() {
        return root().access;
    }

    @Override
    public RemoteRegion remoteRegion() {
        if (root().access.isEmpty()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ACCESS_NOT_GRANTED,
                    "this memory was registered without remote access: register it with the RemoteAccess the "
                            + "peer needs (READ, WRITE, ATOMIC) to hand out a RemoteRegion");
        }
        if (root().isReleased()) {
            throw released();
        }
        return RemoteRegion.of(address(), length(), rkey());
    }

    @Override
    public boolean isReleased() {
        return root().isReleased();
    }

    public static InvalidRequestException released() {
        return new InvalidRequestException(InvalidRequestException.Reason.BUFFER_RELEASED,
                "the registered buffer was released");
    }

    /** A root: owns the hold count and knows how to free the memory. */
    public abstract static class Root extends EngineBuffer {
        final Set<RemoteAccess> access;
        private final AtomicInteger holds = new AtomicInteger(1);
        private final AtomicBoolean released = new AtomicBoolean();
        /** {@link #readOnlyMemory()}, made on first use (racing threads may each make one: equal views). */
        private volatile ByteBuffer readOnlyView;

        Root(Set<RemoteAccess> access) {
            this.access = access;
        }

        ByteBuffer readOnlyView() {
            ByteBuffer v = readOnlyView;
            if (v == null) {
                v = memory().asReadOnlyBuffer();
                readOnlyView = v;
            }
            return v;
        }

        /** Frees the memory: called once, when released and no hold is left. */
        abstract void free();

        @Override
        public Root root() {
            return this;
        }

        boolean retainRoot() {
            while (true) {
                int h = holds.get();
                if (h <= 0 || released.get()) {
                    return false;
                }
                if (holds.compareAndSet(h, h + 1)) {
                    return true;
                }
            }
        }

        void unretainRoot() {
            int h = holds.decrementAndGet();
            if (h == 0) {
                free();
            } else if (h < 0) {
                throw new IllegalStateException("registered buffer hold count below zero");
            }
        }

        @Override
        public boolean isReleased() {
            return released.get();
        }

        @Override
        public void release() {
            if (released.compareAndSet(false, true)) {
                unretainRoot();
            }
        }

        /** Holds taken now (owner included); for tests. */
        public int holds() {
            return holds.get();
        }
    }

    /** A view of part of a root; shares its registration and lifetime. */
    static final class Slice extends EngineBuffer {
        private final Root root;
        private final int offset;
        private final int length;

        Slice(Root root, int offset, int length) {
            this.root = root;
            this.offset = offset;
            this.length = length;
        }

        @Override
        public ByteBuffer memory() {
            return root.memory();
        }

        @Override
        public int offset() {
            return offset;
        }

        @Override
        public long address() {
            return root.address() - root.offset() + offset;
        }

        @Override
        public int lkey() {
            return root.lkey();
        }

        @Override
        public int rkey() {
            return root.rkey();
        }

        @Override
        public io.reactiverdma.reactive.impl.verbs.Registration registration() {
            return root.registration();
        }

        @Override
        public BufferPool pool() {
            return root.pool();
        }

        @Override
        public Root root() {
            return root;
        }

        @Override
        public int length() {
            return length;
        }

        @Override
        public void release() {
            // A view: the root's owner releases.
        }

        @Override
        public String toString() {
            return "RegisteredBuffer slice{" + length + " bytes at offset " + offset + " of " + root + "}";
        }
    }
}
