package io.reactiverdma.verbs.pingpong;

import io.reactiverdma.verbs.Gid;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;

/**
 * What one side of an RC connection tells the other before the QPs can connect: LID, QP number, initial
 * PSN and GID. Encoded exactly as rdma-core's {@code ibv_rc_pingpong} does it
 * ({@code "%04x:%06x:%06x:%s"} plus a NUL, 52 bytes, the GID as 32 hex digits of its raw bytes), so this
 * sample and {@code ibv_rc_pingpong} can ping each other.
 */
record Destination(int lid, int qpn, int psn, Gid gid) {
    /** {@code sizeof "0000:000000:000000:00000000000000000000000000000000"}, NUL included. */
    static final int WIRE_LENGTH = 52;

    Destination {
        Objects.requireNonNull(gid, "gid");
        if (lid < 0 || lid > 0xffff) {
            throw new IllegalArgumentException("lid must fit 16 bits, was " + lid);
        }
        if (qpn < 0 || qpn > 0xffffff) {
            throw new IllegalArgumentException("qpn must fit 24 bits, was " + qpn);
        }
        if (psn < 0 || psn > 0xffffff) {
            throw new IllegalArgumentException("psn must fit 24 bits, was " + psn);
        }
    }

    byte[] toWire() {
        StringBuilder sb = new StringBuilder(WIRE_LENGTH);
        sb.append(String.format(Locale.ROOT, "%04x:%06x:%06x:", lid, qpn, psn));
        for (byte b : gid.raw()) {
            sb.append(String.format(Locale.ROOT, "%02x", b & 0xff));
        }
        byte[] text = sb.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] wire = new byte[WIRE_LENGTH];
        System.arraycopy(text, 0, wire, 0, text.length);
        return wire;
    }

    static Destination fromWire(byte[] wire) {
        Objects.requireNonNull(wire, "wire");
        int end = 0;
        while (end < wire.length && wire[end] != 0) {
            end++;
        }
        String text = new String(wire, 0, end, StandardCharsets.US_ASCII);
        String[] parts = text.split(":");
        if (parts.length != 4 || parts[3].length() != 32) {
            throw new IllegalArgumentException("not an ibv_rc_pingpong destination: \"" + text + "\"");
        }
        try {
            byte[] raw = new byte[16];
            for (int i = 0; i < 16; i++) {
                raw[i] = (byte) Integer.parseInt(parts[3].substring(2 * i, 2 * i + 2), 16);
            }
            return new Destination(Integer.parseInt(parts[0], 16), Integer.parseInt(parts[1], 16),
                    Integer.parseInt(parts[2], 16), Gid.of(raw));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an ibv_rc_pingpong destination: \"" + text + "\"", e);
        }
    }
}
