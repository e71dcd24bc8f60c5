package io.reactiverdma.rsocket;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.reactiverdma.reactive.RdmaMessage;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A received frame as a read-only Netty buffer over the registered receive buffer the RDMA message landed
 * in: nothing is copied. The message (and so the receive buffer, which the engine cannot post again until
 * then) is released when the buffer's reference count reaches zero, whoever (RSocket, or an application
 * holding a payload) releases it last; slices and duplicates share that count.
 *
 * <p>Recycled: at reference count zero the object goes back to its connection's {@link ReceivedFrames} and
 * carries a later frame, so a connection makes no object per frame in steady state. It is handed out
 * again only from there, so a frame that anyone still holds (reference count above zero) is never reused;
 * while it waits there its count stays zero, so a second release, or a read after the last release, is an
 * {@link io.netty.util.IllegalReferenceCountException}. As with Netty's own pooled buffers, a release made
 * through a stale reference after the object carries the next frame cannot be told from a release of that
 * frame: the application's double release, which reference counting forbids.
 */
final class ReceivedFrame extends AbstractReferenceCountedByteBuf {
    /** Frames not yet released, in this JVM: what tests check to prove no receive buffer is left held. */
    private static final AtomicInteger HELD = new AtomicInteger();

    private final ReceivedFrames home;
    private final ByteBufAllocator alloc;
    private RdmaMessage message;
    /** The message's read-only, big-endian view: index 0 is the frame's first byte. */
    private ByteBuffer data;
    /** A duplicate of {@link #data} for {@link #internalNioBuffer}, made when first asked for. */
    private ByteBuffer internal;
    private int length;

    ReceivedFrame(ReceivedFrames home, ByteBufAllocator alloc) {
        super(0);
        this.home = home;
        this.alloc = alloc;
    }

    static int held() {
        return HELD.get();
    }

    /** This (free) object now carries {@code message}: reference count 1, the whole message readable. */
    ReceivedFrame carry(RdmaMessage message) {
        this.message = message;
        this.data = message.data();
        this.length = data.remaining();
        maxCapacity(length);
        setIndex(0, length);
        resetRefCnt();
        HELD.incrementAndGet();
        return this;
    }

    @Override
    protected void deallocate() {
        RdmaMessage m = message;
        message = null;
        data = null;
        internal = null;
        length = 0;
        HELD.decrementAndGet();
        home.recycle(this); // from here on another thread may hand this object out again: touch nothing
        m.release();
    }

    @Override
    protected byte _getByte(int index) {
        return data.get(index);
    }

    @Override
    protected short _getShort(int index) {
        return data.getShort(index);
    }

    @Override
    protected short _getShortLE(int index) {
        return ByteBufUtil.swapShort(data.getShort(index));
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        return (data.get(index) & 0xff) << 16 | (data.get(index + 1) & 0xff) << 8 | data.get(index + 2) & 0xff;
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        return data.get(index) & 0xff | (data.get(index + 1) & 0xff) << 8 | (data.get(index + 2) & 0xff) << 16;
    }

    @Override
    protected int _getInt(int index) {
        return data.getInt(index);
    }

    @Override
    protected int _getIntLE(int index) {
        return ByteBufUtil.swapInt(data.getInt(index));
    }

    @Override
    protected long _getLong(int index) {
        return data.getLong(index);
    }

    @Override
    protected long _getLongLE(int index) {
        return ByteBufUtil.swapLong(data.getLong(index));
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkDstIndex(index, length, dstIndex, dst.capacity());
        if (dst.hasArray()) {
            getBytes(index, dst.array(), dst.arrayOffset() + dstIndex, length);
        } else if (dst.nioBufferCount() == 1) {
            ByteBuffer target = dst.internalNioBuffer(dstIndex, length);
            target.put(target.position(), data, index, length);
        } else {
            dst.setBytes(dstIndex, data.slice(index, length));
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkDstIndex(index, length, dstIndex, dst.length);
        data.get(index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        int n = dst.remaining();
        checkIndex(index, n);
        dst.put(dst.position(), data, index, n);
        dst.position(dst.position() + n);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        if (length > 0) {
            byte[] bytes = new byte[length];
            data.get(index, bytes);
            out.write(bytes);
        }
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        return length == 0 ? 0 : out.write(data.slice(index, length));
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        return length == 0 ? 0 : out.write(data.slice(index, length), position);
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        return alloc.directBuffer(length).writeBytes(data.slice(index, length));
    }

    @Override
    public int nioBufferCount() {
        return 1;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        return data.slice(index, length);
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        checkIndex(index, length);
        if (internal == null) {
            internal = data.duplicate();
        }
        return internal.clear().position(index).limit(index + length);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        return new ByteBuffer[] {nioBuffer(index, length)};
    }

    @Override
    public boolean isReadOnly() {
        return true;
    }

    @Override
    public boolean isWritable() {
        return false;
    }

    @Override
    public boolean isWritable(int numBytes) {
        return false;
    }

    @Override
    public ByteBuf ensureWritable(int minWritableBytes) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int ensureWritable(int minWritableBytes, boolean force) {
        return 1; // cannot be made writable, as ByteBuf#ensureWritable(int, boolean) documents that code
    }

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBufAllocator alloc() {
        return alloc;
    }

    @Override
    @SuppressWarnings("deprecation") // ByteBuf#order(): still abstract
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return true;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public byte[] array() {
        throw new UnsupportedOperationException("a received frame is a view of a registered receive buffer");
    }

    @Override
    public int arrayOffset() {
        throw new UnsupportedOperationException("a received frame is a view of a registered receive buffer");
    }

    @Override
    public boolean hasMemoryAddress() {
        return false;
    }

    @Override
    public long memoryAddress() {
        throw new UnsupportedOperationException("a received frame does not expose its memory address");
    }

    // Read only: every write is refused.

    @Override
    protected void _setByte(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShort(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShortLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMedium(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setInt(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setIntLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLong(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLongLE(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, InputStream in, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) {
        throw new ReadOnlyBufferException();
    }
}
