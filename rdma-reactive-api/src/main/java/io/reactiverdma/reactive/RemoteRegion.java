package io.reactiverdma.reactive;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A range of a peer's registered memory that this side may access with one-sided operations: its virtual
 * address, length and remote key. The peer creates it with {@link RegisteredBuffer#remoteRegion()} and
 * hands it over (for example in a message) in its compact binary form of {@value #ENCODED_SIZE} bytes:
 * <pre>
 *   address: 8 bytes, length: 8 bytes, rkey: 4 bytes   (big-endian)
 * </pre>
 * Immutable.
 */
public final class RemoteRegion {
    /** Size of {@link #toBytes()} / {@link #writeTo(ByteBuffer)}. */
    public static final int ENCODED_SIZE = 20;

    private final long address;
    private final long length;
    private final int rkey;

    private RemoteRegion(long address, long length, int rkey) {
        this.address = address;
        this.length = length;
        this.rkey = rkey;
    }

    /**
     * A region of {@code length} bytes at {@code address} accessed with {@code rkey}.
     *
     * @throws InvalidRequestException when the length is negative or the range wraps around the address space
     */
    public static RemoteRegion of(long address, long length, int rkey) {
        if (length < 0) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "remote region length must be >= 0, got " + length);
        }
        if (Long.compareUnsigned(address + length, address) < 0) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "remote region 0x" + Long.toHexString(address) + " + " + length + " wraps around");
        }
        return new RemoteRegion(address, length, rkey);
    }

    /** Reads the compact form from {@code bytes} (exactly {@value #ENCODED_SIZE} bytes). */
    public static RemoteRegion fromBytes(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        if (bytes.length != ENCODED_SIZE) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "an encoded RemoteRegion has " + ENCODED_SIZE + " bytes, got " + bytes.length);
        }
        return readFrom(ByteBuffer.wrap(bytes));
    }

    /** Reads the compact form at the buffer's position and advances it by {@value #ENCODED_SIZE}. */
    public static RemoteRegion readFrom(ByteBuffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        if (buffer.remaining() < ENCODED_SIZE) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "an encoded RemoteRegion needs " + ENCODED_SIZE + " bytes, " + buffer.remaining() + " remain");
        }
        // Absolute big-endian reads: a refused region leaves the buffer where it was.
        ByteBuffer b = buffer.duplicate().order(ByteOrder.BIG_ENDIAN);
        int at = buffer.position();
        RemoteRegion r = of(b.getLong(at), b.getLong(at + 8), b.getInt(at + 16));
        buffer.position(at + ENCODED_SIZE);
        return r;
    }

    /** Writes the compact form at the buffer's position and advances it by {@value #ENCODED_SIZE}. */
    public ByteBuffer writeTo(ByteBuffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        if (buffer.remaining() < ENCODED_SIZE) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "an encoded RemoteRegion needs " + ENCODED_SIZE + " bytes, " + buffer.remaining() + " remain");
        }
        ByteOrder order = buffer.order();
        buffer.order(ByteOrder.BIG_ENDIAN);
        try {
            return buffer.putLong(address).putLong(length).putInt(rkey);
        } finally {
            buffer.order(order);
        }
    }

    /** The compact form, {@value #ENCODED_SIZE} bytes. */
    public byte[] toBytes() {
        byte[] b = new byte[ENCODED_SIZE];
        writeTo(ByteBuffer.wrap(b));
        return b;
    }

    /**
     * The sub-range {@code [offset, offset + length)} of this region, same rkey.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#OUTSIDE_REGION}) when it does
     *                                 not lie inside this region
     */
    public RemoteRegion slice(long offset, long length) {
        if (offset < 0 || length < 0 || offset > this.length || length > this.length - offset) {
            throw new InvalidRequestException(InvalidRequestException.Reason.OUTSIDE_REGION,
                    "slice [" + offset + ", " + offset + " + " + length + ") outside the " + this.length
                            + "-byte remote region " + this);
        }
        return new RemoteRegion(address + offset, length, rkey);
    }

    /** The peer's virtual address of the first byte. */
    public long address() {
        return address;
    }

    public long length() {
        return length;
    }

    /** The remote key the peer's registration gave. */
    public int rkey() {
        return rkey;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemoteRegion r && r.address == address && r.length == length && r.rkey == rkey;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(address) * 31 + Long.hashCode(length) * 17 + rkey;
    }

    @Override
    public String toString() {
        return "RemoteRegion{0x" + Long.toHexString(address) + ", " + length + " bytes, rkey 0x"
                + Integer.toHexString(rkey) + "}";
    }
}
