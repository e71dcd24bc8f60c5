package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Why this framework's server rejected a request, as the reject's private data carries it to the client:
 * <pre>
 *  offset size  field
 *   0     4     magic 0x52524D4A ("RRMJ")
 *   4     1     version (1)
 *   5     1     the {@link Rejection}'s ordinal
 *   6     1     length n of the reason (0..140)
 *   7     1     reserved (0)
 *   8     n     the reason, UTF-8
 * </pre>
 * At most 148 bytes: what an IB/RoCE CM reject carries. Read back by the client, which trusts none of it.
 */
final class RejectData {
    static final int MAGIC = 0x52524D4A;
    static final int VERSION = 1;
    static final int HEADER = 8;
    /** The CM's limit on a reject's private data (IB/RoCE). */
    static final int MAX = 148;

    private RejectData() {
    }

    /** The private data for {@code rejection}; a reason longer than fits is cut at a character boundary. */
    static byte[] encode(Rejection rejection, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX - HEADER);
        while (n > 0 && n < text.length && (text[n] & 0xC0) == 0x80) {
            n--; // do not split a UTF-8 sequence
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER + n);
        b.putInt(MAGIC).put((byte) VERSION).put((byte) rejection.ordinal()).put((byte) n).put((byte) 0)
                .put(text, 0, n);
        return b.array();
    }

    /**
     * The typed exception for a REJECTED event: with the server's rejection and reason when the private data is
     * this format and well formed, else {@link Rejection#UNSPECIFIED} (a plain peer, the CM's own reject, or
     * malformed data).
     */
    static ConnectionRejectedException decode(String target, int status, byte[] privateData) {
        byte[] trimmed = trim(privateData);
        if (privateData.length >= HEADER) {
            ByteBuffer b = ByteBuffer.wrap(privateData);
            int magic = b.getInt();
            int version = b.get();
            int code = b.get() & 0xFF;
            int n = b.get() & 0xFF;
            if (magic == MAGIC && version == VERSION && code < Rejection.values().length
                    && Rejection.values()[code] != Rejection.UNSPECIFIED && n <= MAX - HEADER
                    && HEADER + n <= privateData.length) {
                String reason = utf8(Arrays.copyOfRange(privateData, HEADER, HEADER + n));
                if (reason != null) {
                    Rejection r = Rejection.values()[code];
                    return new ConnectionRejectedException("connecting to " + target + " was rejected: " + r
                            + ": " + reason, status, trimmed, r, reason);
                }
            }
        }
        return new ConnectionRejectedException("connecting to " + target + " was rejected (status " + status
                + (status == 8 ? ": nothing listens there" : "") + ")", status, trimmed, Rejection.UNSPECIFIED, null);
    }

    private static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static byte[] trim(byte[] data) {
        int n = data.length;
        while (n > 0 && data[n - 1] == 0) {
            n--;
        }
        return Arrays.copyOf(data, n);
    }
}
