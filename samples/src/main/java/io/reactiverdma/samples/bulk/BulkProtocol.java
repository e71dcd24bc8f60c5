package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.RemoteRegion;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The bulk sample's control messages: small two-sided messages (all bytes big-endian, first byte the type).
 * The chunks themselves move with one-sided RDMA WRITE (push) or READ (pull).
 * <pre>
 *   HELLO     sender -> receiver  type 1, magic "BULK", version 1, mode (0 push, 1 pull), chunk size int32,
 *                                 window int32, total bytes int64
 *   ADVERTISE receiver -> sender  type 2, slot int32, region (20 bytes): write the next chunk for this slot here
 *   READY     sender -> receiver  type 3, slot int32, seq int64, region (20 bytes, the chunk's length):
 *                                 chunk seq is ready to be read
 *   FREE      receiver -> sender  type 4, slot int32, seq int64: chunk seq was read, the slot is free
 *   RESULT    receiver -> sender  type 5, bytes int64, SHA-256 (32 bytes) of what it received
 *   ERROR     receiver -> sender  type 6, length int16, UTF-8 text: the transfer is refused
 * </pre>
 * In push mode the WRITE's 32-bit immediate says which slot the chunk went to and the low 16 bits of its
 * sequence number ({@link #immediate}); its length follows from the HELLO.
 */
public final class BulkProtocol {
    /** The largest encoded message (an ERROR with the longest text): the receive buffers' size. */
    public static final int MAX_MESSAGE_SIZE = 256;
    static final int MAGIC = 0x42554C4B; // "BULK"
    static final byte VERSION = 1;
    private static final int MAX_ERROR_TEXT = MAX_MESSAGE_SIZE - 3;

    private BulkProtocol() {
    }

    /** One control message. */
    public sealed interface Message permits Hello, Advertise, Ready, Free, Result, Error, Written {
    }

    public record Hello(TransferMode mode, int chunkSize, int window, long totalBytes) implements Message {
        public Hello {
            Objects.requireNonNull(mode, "mode");
        }
    }

    public record Advertise(int slot, RemoteRegion region) implements Message {
        public Advertise {
            Objects.requireNonNull(region, "region");
        }
    }

    public record Ready(int slot, long seq, RemoteRegion region) implements Message {
        public Ready {
            Objects.requireNonNull(region, "region");
        }
    }

    public record Free(int slot, long seq) implements Message {
    }

    public record Result(long bytes, byte[] sha256) implements Message {
        public Result {
            if (sha256.length != 32) {
                throw new IllegalArgumentException("a SHA-256 has 32 bytes, got " + sha256.length);
            }
            sha256 = sha256.clone();
        }

        @Override
        public byte[] sha256() {
            return sha256.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Result r && r.bytes == bytes && Arrays.equals(r.sha256, sha256);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(bytes) * 31 + Arrays.hashCode(sha256);
        }

        @Override
        public String toString() {
            return "Result[bytes=" + bytes + ", sha256=" + HexFormat.of().formatHex(sha256) + "]";
        }
    }

    public record Error(String text) implements Message {
        public Error {
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * Not a message of its own: the arrival of a push chunk, the immediate of its WRITE ({@link #immediate}).
     *
     * @param slot       the ring slot the chunk was written to
     * @param seqLowBits the low 16 bits of its sequence number
     */
    public record Written(int slot, int seqLowBits) implements Message {
        /** What the immediate {@code immediate} says. */
        public static Written of(int immediate) {
            return new Written(immediate & 0xFFFF, immediate >>> 16);
        }
    }

    /**
     * The message's bytes, position 0, ready to send.
     *
     * @throws IllegalArgumentException for a {@link Written}, which travels as a WRITE's immediate
     */
    public static ByteBuffer encode(Message message) {
        ByteBuffer b = ByteBuffer.allocate(MAX_MESSAGE_SIZE);
        // (Java 17: no pattern matching for switch yet.)
        if (message instanceof Hello h) {
            b.put((byte) 1).putInt(MAGIC).put(VERSION).put((byte) h.mode().ordinal())
                    .putInt(h.chunkSize()).putInt(h.window()).putLong(h.totalBytes());
        } else if (message instanceof Advertise a) {
            a.region().writeTo(b.put((byte) 2).putInt(a.slot()));
        } else if (message instanceof Ready r) {
            r.region().writeTo(b.put((byte) 3).putInt(r.slot()).putLong(r.seq()));
        } else if (message instanceof Free f) {
            b.put((byte) 4).putInt(f.slot()).putLong(f.seq());
        } else if (message instanceof Result r) {
            b.put((byte) 5).putLong(r.bytes()).put(r.sha256);
        } else if (message instanceof Error e) {
            byte[] text = truncate(e.text());
            b.put((byte) 6).putShort((short) text.length).put(text);
        } else {
            throw new IllegalArgumentException(message + " travels as a WRITE's immediate, not as a message");
        }
        return b.flip();
    }

    /**
     * Reads one message from {@code data} (its position to its limit).
     *
     * @throws BulkTransferException ({@link BulkTransferException.Reason#PROTOCOL}) when it is not one
     */
    public static Message decode(ByteBuffer data) {
        ByteBuffer b = data.duplicate().order(java.nio.ByteOrder.BIG_ENDIAN);
        int length = b.remaining();
        try {
            int type = length == 0 ? -1 : b.get();
            Message m = switch (type) {
                case 1 -> {
                    if (b.getInt() != MAGIC || b.get() != VERSION) {
                        throw malformed("a HELLO of another protocol or version", length);
                    }
                    int mode = b.get();
                    if (mode < 0 || mode >= TransferMode.values().length) {
                        throw malformed("a HELLO with the unknown mode " + mode, length);
                    }
                    yield new Hello(TransferMode.values()[mode], b.getInt(), b.getInt(), b.getLong());
                }
                case 2 -> new Advertise(b.getInt(), RemoteRegion.readFrom(b));
                case 3 -> new Ready(b.getInt(), b.getLong(), RemoteRegion.readFrom(b));
                case 4 -> new Free(b.getInt(), b.getLong());
                case 5 -> {
                    long bytes = b.getLong();
                    byte[] sha = new byte[32];
                    b.get(sha);
                    yield new Result(bytes, sha);
                }
                case 6 -> {
                    int textLength = Short.toUnsignedInt(b.getShort());
                    if (textLength != b.remaining()) { // checked before the text is allocated
                        throw malformed("an ERROR whose text length " + textLength + " is not the "
                                + b.remaining() + " bytes that follow", length);
                    }
                    byte[] text = new byte[textLength];
                    b.get(text);
                    yield new Error(new String(text, StandardCharsets.UTF_8));
                }
                default -> throw malformed(length == 0 ? "an empty message" : "a message of unknown type " + type,
                        length);
            };
            if (b.hasRemaining()) {
                throw malformed("a " + m.getClass().getSimpleName() + " with " + b.remaining() + " extra bytes",
                        length);
            }
            return m;
        } catch (BufferUnderflowException | NegativeArraySizeException
                 | io.reactiverdma.reactive.InvalidRequestException e) {
            throw malformed("a truncated or malformed message", length);
        }
    }

    /** The immediate of a push WRITE: slot in the low 16 bits, the chunk's sequence number's low 16 bits above. */
    public static int immediate(int slot, long seq) {
        if (slot < 0 || slot > 0xFFFF) {
            throw new IllegalArgumentException("slot must be 0..65535, got " + slot);
        }
        return (int) ((seq & 0xFFFF) << 16) | slot;
    }

    private static byte[] truncate(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_ERROR_TEXT) {
            return b;
        }
        // Cut at a character boundary: drop continuation bytes (10xxxxxx) at the cut.
        int n = MAX_ERROR_TEXT;
        while (n > 0 && (b[n] & 0xC0) == 0x80) {
            n--;
        }
        return Arrays.copyOf(b, n);
    }

    private static BulkTransferException malformed(String what, int length) {
        return new BulkTransferException(BulkTransferException.Reason.PROTOCOL,
                "the peer sent " + what + " (" + length + " bytes)", 0, null);
    }
}
