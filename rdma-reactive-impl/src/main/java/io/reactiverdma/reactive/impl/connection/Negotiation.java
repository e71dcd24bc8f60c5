package io.reactiverdma.reactive.impl.connection;

import java.nio.ByteBuffer;

/**
 * What this framework offers its peer in the rdma_cm private data (connect request and accept reply).
 * Nothing of it is mandatory: a peer whose private data does not start with {@link #MAGIC} (any plain
 * rdma_cm program) is treated as offering nothing, and the connection is plain SEND/RECV.
 * <pre>
 *  offset size  field (big-endian)
 *   0     4     magic 0x52524D41 ("RRMA")
 *   4     1     version (2: with credits, each side's first message is a hello and the peer's word is
 *                 written only after the peer's hello, see CreditWordHandshake)
 *   5     1     flags: bit 0 = credit flow control offered
 *   6     1     length of the application's private data that follows the offer (0..255; 0 = none)
 *   7     1     reserved (0)
 *   8     8     address of the credit word the peer RDMA-WRITEs its receive counter into
 *  16     4     rkey of that word
 *  20     4     receive buffer size: the largest message this side receives
 *  24     n     the application's private data ({@code RdmaClient.privateData}, {@code Admission.accept(byte[])})
 * </pre>
 * 24 bytes of offer: within the 56 bytes a connect request carries on IB/RoCE, leaving 32 for the application
 * (172 of an accept's 196). Byte 6 was reserved (0) before, so an offer without application data reads as it
 * did.
 */
public record Negotiation(boolean credits, long creditAddress, int creditRkey, int receiveBufferSize) {
    static final int MAGIC = 0x52524D41;
    static final int VERSION = 2;
    static final int SIZE = 24;
    static final int FLAG_CREDITS = 1;
    static final int APPLICATION_LENGTH_OFFSET = 6;
    private static final byte[] NONE = new byte[0];

    public byte[] encode() {
        return encode(NONE);
    }

    /** The offer followed by {@code applicationData} (at most 255 bytes; the caller checked the CM's limit). */
    public byte[] encode(byte[] applicationData) {
        if (applicationData.length > 255) {
            throw new IllegalArgumentException("application private data of " + applicationData.length
                    + " bytes does not fit the offer's length byte");
        }
        ByteBuffer b = ByteBuffer.allocate(SIZE + applicationData.length);
        b.putInt(MAGIC).put((byte) VERSION).put((byte) (credits ? FLAG_CREDITS : 0))
                .put((byte) applicationData.length).put((byte) 0)
                .putLong(creditAddress).putInt(creditRkey).putInt(receiveBufferSize).put(applicationData);
        return b.array();
    }

    /**
     * The application's private data behind an offer ({@link #decode} of the same bytes is not null): empty
     * when none; null when the length byte claims more bytes than arrived (a malformed or hostile peer).
     */
    public static byte[] applicationData(byte[] privateData) {
        int n = privateData[APPLICATION_LENGTH_OFFSET] & 0xFF;
        if (SIZE + n > privateData.length) {
            return null;
        }
        return java.util.Arrays.copyOfRange(privateData, SIZE, SIZE + n);
    }

    /**
     * The peer's offer, or null when {@code privateData} is not one (no magic, too short, or a version this
     * side does not speak: then nothing is negotiated).
     */
    public static Negotiation decode(byte[] privateData) {
        if (privateData == null || privateData.length < SIZE) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(privateData);
        if (b.getInt() != MAGIC || b.get() != VERSION) {
            return null;
        }
        int flags = b.get();
        b.getShort();
        long address = b.getLong();
        int rkey = b.getInt();
        int size = b.getInt();
        if (size <= 0) {
            return null;
        }
        return new Negotiation((flags & FLAG_CREDITS) != 0, address, rkey, size);
    }
}
