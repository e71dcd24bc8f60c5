package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RemoteRegion;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The two-sided messages (big-endian). The server's first message on a connection is the {@link KvLayout}
 * handshake; after it, every client message is a request and every server message the response to one,
 * matched by the request id (a client may have many requests outstanding).
 * <pre>
 *   request:  op u8 | 0 u8 | key length u16 | request id u32 | value length u32 | ...
 *     PUT_INLINE  ... | key | value                      the value travels in the message
 *     PUT_REMOTE  ... | source RemoteRegion (20) | key   the server RDMA READs the value from the client
 *     DELETE      ... | key                              (value length 0)
 *     COUNTER     ... | name                             find or create the named counter
 *   response: 0x80 u8 | status u8 | 0 u16 | request id u32 | result u64 | detail length u16 | detail (UTF-8)
 *     result: DELETE 1 when a value was removed, 0 when there was none; COUNTER the counter's index
 * </pre>
 */
final class KvProtocol {
    static final int REQUEST_HEADER_BYTES = 12;
    static final int RESPONSE_HEADER_BYTES = 18;
    static final int MAX_DETAIL_BYTES = 256;
    private static final byte RESPONSE = (byte) 0x80;

    private KvProtocol() {
    }

    enum Op {
        PUT_INLINE, PUT_REMOTE, DELETE, COUNTER;

        byte code() {
            return (byte) (ordinal() + 1);
        }

        static Op of(byte code) {
            int i = code - 1;
            if (i < 0 || i >= values().length) {
                throw new KvException(KvException.Reason.PROTOCOL, "unknown request op " + code);
            }
            return values()[i];
        }
    }

    /** A response's status: OK, or the reason the request failed. */
    enum Status {
        OK(null),
        NOT_FOUND(KvException.Reason.NOT_FOUND),
        KEY_TOO_LONG(KvException.Reason.KEY_TOO_LONG),
        VALUE_TOO_LARGE(KvException.Reason.VALUE_TOO_LARGE),
        TABLE_FULL(KvException.Reason.TABLE_FULL),
        VALUE_AREA_FULL(KvException.Reason.VALUE_AREA_FULL),
        COUNTERS_FULL(KvException.Reason.COUNTERS_FULL),
        PROTOCOL(KvException.Reason.PROTOCOL),
        SERVER_ERROR(KvException.Reason.SERVER_ERROR);

        private final KvException.Reason reason;

        Status(KvException.Reason reason) {
            this.reason = reason;
        }

        KvException.Reason reason() {
            return reason;
        }

        static Status of(KvException.Reason reason) {
            for (Status s : values()) {
                if (s.reason == reason) {
                    return s;
                }
            }
            return SERVER_ERROR;
        }
    }

    /**
     * One request.
     *
     * @param value  PUT_INLINE: the value; else null
     * @param source PUT_REMOTE: where the server reads the value; else null
     */
    record Request(Op op, int id, byte[] key, int valueLength, byte[] value, RemoteRegion source) {
        static Request putInline(int id, byte[] key, byte[] value) {
            return new Request(Op.PUT_INLINE, id, key, value.length, value, null);
        }

        static Request putRemote(int id, byte[] key, int valueLength, RemoteRegion source) {
            return new Request(Op.PUT_REMOTE, id, key, valueLength, null, source);
        }

        static Request delete(int id, byte[] key) {
            return new Request(Op.DELETE, id, key, 0, null, null);
        }

        static Request counter(int id, byte[] name) {
            return new Request(Op.COUNTER, id, name, 0, null, null);
        }
    }

    record Response(int id, Status status, long result, String detail) {
        /** The failure this response reports, or null for OK. */
        KvException failure() {
            return status == Status.OK ? null : new KvException(status.reason(), detail);
        }
    }

    /** Bytes of a PUT_INLINE message for these lengths (larger than the server's message size: PUT_REMOTE). */
    static long putInlineBytes(int keyLength, int valueLength) {
        return (long) REQUEST_HEADER_BYTES + keyLength + valueLength;
    }

    static ByteBuffer encode(Request r) {
        int extra = switch (r.op()) {
            case PUT_INLINE -> r.value().length;
            case PUT_REMOTE -> RemoteRegion.ENCODED_SIZE;
            case DELETE, COUNTER -> 0;
        };
        ByteBuffer b = ByteBuffer.allocate(REQUEST_HEADER_BYTES + r.key().length + extra);
        b.put(r.op().code()).put((byte) 0).putShort((short) r.key().length).putInt(r.id()).putInt(r.valueLength());
        if (r.op() == Op.PUT_REMOTE) {
            r.source().writeTo(b);
        }
        b.put(r.key());
        if (r.op() == Op.PUT_INLINE) {
            b.put(r.value());
        }
        return b.flip();
    }

    /**
     * Reads a request.
     *
     * @throws KvException ({@link KvException.Reason#PROTOCOL}) when it is malformed; its message names the
     *                     request id when that much could be read
     */
    static Request decodeRequest(ByteBuffer message) {
        ByteBuffer b = message.duplicate();
        int length = b.remaining();
        if (length < REQUEST_HEADER_BYTES) {
            throw new KvException(KvException.Reason.PROTOCOL, "a request of " + length + " bytes is shorter than"
                    + " the " + REQUEST_HEADER_BYTES + "-byte header");
        }
        Op op = Op.of(b.get());
        b.get();
        int keyLength = Short.toUnsignedInt(b.getShort());
        int id = b.getInt();
        int valueLength = b.getInt();
        // Every length is checked against the bytes that arrived BEFORE anything is allocated: a peer's
        // length field must not make this (poller) thread allocate what the message does not hold.
        long body = (long) keyLength + switch (op) {
            case PUT_INLINE -> Integer.toUnsignedLong(valueLength);
            case PUT_REMOTE -> RemoteRegion.ENCODED_SIZE;
            case DELETE, COUNTER -> 0;
        };
        if (valueLength < 0) {
            throw refused(id, op, "value length " + Integer.toUnsignedString(valueLength) + " is negative");
        }
        if (body != b.remaining()) {
            throw refused(id, op, "key length " + keyLength + (op == Op.PUT_INLINE ? " and value length "
                    + valueLength : "") + " need " + body + " bytes after the header, the message has "
                    + b.remaining());
        }
        try {
            RemoteRegion source = op == Op.PUT_REMOTE ? RemoteRegion.readFrom(b) : null;
            if (op == Op.PUT_REMOTE && source.length() < valueLength) {
                throw refused(id, op, "the value's source region " + source + " is shorter than its "
                        + valueLength + " bytes");
            }
            byte[] key = new byte[keyLength];
            b.get(key);
            byte[] value = null;
            if (op == Op.PUT_INLINE) {
                value = new byte[valueLength];
                b.get(value);
            }
            return new Request(op, id, key, valueLength, value, source);
        } catch (InvalidRequestException e) {
            throw refused(id, op, e.getMessage());
        }
    }

    private static KvException refused(int id, Op op, String what) {
        return new KvException(KvException.Reason.PROTOCOL, "malformed " + op + " request " + id + ": " + what);
    }

    /** The request id of a message that could not be decoded as a whole, or -1 when it is too short. */
    static int requestIdOf(ByteBuffer message) {
        return message.remaining() >= 8 ? message.getInt(message.position() + 4) : -1;
    }

    static ByteBuffer encode(Response r) {
        byte[] detail = r.detail() == null ? new byte[0] : r.detail().getBytes(StandardCharsets.UTF_8);
        int detailLength = Math.min(detail.length, MAX_DETAIL_BYTES);
        ByteBuffer b = ByteBuffer.allocate(RESPONSE_HEADER_BYTES + detailLength);
        b.put(RESPONSE).put((byte) r.status().ordinal()).putShort((short) 0).putInt(r.id()).putLong(r.result())
                .putShort((short) detailLength).put(detail, 0, detailLength);
        return b.flip();
    }

    /**
     * Reads a response.
     *
     * @throws KvException ({@link KvException.Reason#PROTOCOL}) when it is not one
     */
    static Response decodeResponse(ByteBuffer message) {
        ByteBuffer b = message.duplicate();
        try {
            if (b.get() != RESPONSE) {
                throw new KvException(KvException.Reason.PROTOCOL, "not a response: first byte 0x"
                        + Integer.toHexString(message.get(message.position()) & 0xff));
            }
            int status = Byte.toUnsignedInt(b.get());
            if (status >= Status.values().length) {
                throw new KvException(KvException.Reason.PROTOCOL, "unknown response status " + status);
            }
            b.getShort();
            int id = b.getInt();
            long result = b.getLong();
            int detailLength = Short.toUnsignedInt(b.getShort());
            if (detailLength != b.remaining()) {
                throw new KvException(KvException.Reason.PROTOCOL, "malformed response " + id + ": detail length "
                        + detailLength + ", the message has " + b.remaining() + " bytes after the header");
            }
            byte[] detail = new byte[detailLength];
            b.get(detail);
            return new Response(id, Status.values()[status], result, new String(detail, StandardCharsets.UTF_8));
        } catch (BufferUnderflowException e) {
            throw new KvException(KvException.Reason.PROTOCOL, "truncated response of " + message.remaining()
                    + " bytes");
        }
    }
}
