package io.reactiverdma.cm;

/** {@code enum rdma_port_space}: the kind of connection an {@link RdmaCmId} makes. */
public enum PortSpace {
    /** Reliable connected (RC QPs): connect/accept, like TCP. */
    TCP(0x0106),
    /** Unreliable datagram (UD QPs): address/route resolution and a one-shot SIDR exchange, like UDP. */
    UDP(0x0111),
    IPOIB(0x0002),
    IB(0x013F);

    private final int value;

    PortSpace(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    public static PortSpace of(int value) {
        for (PortSpace p : values()) {
            if (p.value == value) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown rdma_port_space 0x" + Integer.toHexString(value));
    }
}
