package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * A 128-bit Global Identifier, immutable. On RoCE a GID is an IPv6 address or an IPv4-mapped IPv6 address
 * ({@code ::ffff:10.77.0.1}); the RoCEv2 GID of an IPv4 address is what a QP's address vector needs.
 * <pre>
 * union ibv_gid {
 *     uint8_t raw[16];
 *     struct {
 *         __be64 subnet_prefix;
 *         __be64 interface_id;
 *     } global;
 * };
 * </pre>
 */
@NativeStruct(value = "union ibv_gid", header = "infiniband/verbs.h")
public final class Gid {
    public static final int SIZE = 16;
    @NativeField("raw")
    public static final int RAW_OFFSET = 0;
    @NativeField("global.subnet_prefix")
    public static final int SUBNET_PREFIX_OFFSET = 0;
    @NativeField("global.interface_id")
    public static final int INTERFACE_ID_OFFSET = 8;

    /** The all-zero GID (an empty GID table entry). */
    public static final Gid ZERO = new Gid(new byte[SIZE]);

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /** A GID from its 16 bytes (network order, as in {@code raw}). */
    public static Gid of(byte[] raw) {
        Objects.requireNonNull(raw, "raw");
        if (raw.length != SIZE) {
            throw new IllegalArgumentException("raw must be 16 bytes, got " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /** An IPv6 address as a GID; an IPv4 address as its IPv4-mapped GID ({@code ::ffff:a.b.c.d}). */
    public static Gid of(InetAddress address) {
        Objects.requireNonNull(address, "address");
        byte[] a = address.getAddress();
        if (address instanceof Inet4Address) {
            byte[] r = new byte[SIZE];
            r[10] = (byte) 0xff;
            r[11] = (byte) 0xff;
            System.arraycopy(a, 0, r, 12, 4);
            return new Gid(r);
        }
        return new Gid(a);
    }

    /** Parses a textual IPv6 or IPv4 address (no host name lookup). */
    public static Gid parse(String text) {
        Objects.requireNonNull(text, "text");
        if (!text.matches("[0-9a-fA-F:.]+")) {
            throw new IllegalArgumentException("not an IPv6/IPv4 address literal: " + text);
        }
        try {
            return of(InetAddress.getByName(text));
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IPv6/IPv4 address literal: " + text, e);
        }
    }

    /** Reads 16 bytes at {@code offset} of a buffer. */
    public static Gid read(ByteBuffer buffer, int offset) {
        byte[] r = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            r[i] = buffer.get(offset + i);
        }
        return new Gid(r);
    }

    /** Writes the 16 bytes at {@code offset} of a buffer. */
    public void write(ByteBuffer buffer, int offset) {
        for (int i = 0; i < SIZE; i++) {
            buffer.put(offset + i, raw[i]);
        }
    }

    /** A copy of the 16 bytes. */
    public byte[] raw() {
        return raw.clone();
    }

    /** {@code global.subnet_prefix} as a host-order number. */
    public long subnetPrefix() {
        return ByteBuffer.wrap(raw).getLong(0);
    }

    /** {@code global.interface_id} as a host-order number. */
    public long interfaceId() {
        return ByteBuffer.wrap(raw).getLong(8);
    }

    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** True for {@code ::ffff:a.b.c.d}: the GID of an IPv4 address on RoCEv2. */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** The IPv4 address of an IPv4-mapped GID, else the IPv6 address. */
    public InetAddress toInetAddress() {
        try {
            return isIpv4Mapped() ? InetAddress.getByAddress(Arrays.copyOfRange(raw, 12, 16))
                    : InetAddress.getByAddress(raw);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    /** IPv6 text as ibv_devinfo prints it: {@code fe80::5cd4:c6ff:fe62:be40}, {@code ::ffff:10.77.0.1}. */
    @Override
    public String toString() {
        if (isIpv4Mapped()) {
            return "::ffff:" + (raw[12] & 0xff) + "." + (raw[13] & 0xff) + "." + (raw[14] & 0xff) + "."
                    + (raw[15] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((raw[2 * i] & 0xff) << 8) | (raw[2 * i + 1] & 0xff);
        }
        // Longest run of zero groups (length >= 2) becomes "::".
        int bestStart = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (groups[i] == 0) {
                int j = i;
                while (j < 8 && groups[j] == 0) {
                    j++;
                }
                if (j - i > bestLen && j - i >= 2) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }
}
