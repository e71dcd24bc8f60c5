package io.reactiverdma.verbs;

/**
 * {@code enum ibv_wc_opcode}: what a completion completed. Receive-side opcodes have bit 7 set
 * ({@link #isReceive()}). Only meaningful for successful completions.
 */
public enum WcOpcode {
    SEND(0),
    RDMA_WRITE(1),
    RDMA_READ(2),
    COMP_SWAP(3),
    FETCH_ADD(4),
    BIND_MW(5),
    LOCAL_INV(6),
    TSO(7),
    ATOMIC_WRITE(9),
    RECV(1 << 7),
    RECV_RDMA_WITH_IMM((1 << 7) + 1),
    TM_ADD((1 << 7) + 2),
    TM_DEL((1 << 7) + 3),
    TM_SYNC((1 << 7) + 4),
    TM_RECV((1 << 7) + 5),
    TM_NO_TAG((1 << 7) + 6),
    DRIVER1((1 << 7) + 7),
    DRIVER2((1 << 7) + 8),
    DRIVER3((1 << 7) + 9),
    /** A value this enum does not know (or the opcode of a failed completion, which is undefined). */
    UNKNOWN(-1);

    private static final WcOpcode[] BY_VALUE = new WcOpcode[256];

    static {
        for (WcOpcode o : values()) {
            if (o.value >= 0) {
                BY_VALUE[o.value] = o;
            }
        }
    }

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    /** True for completions of receive work requests ({@code opcode & IBV_WC_RECV}). */
    public boolean isReceive() {
        return value >= 0 && (value & (1 << 7)) != 0;
    }

    /** The constant for a C value; {@link #UNKNOWN} if not listed. No allocation. */
    public static WcOpcode of(int value) {
        WcOpcode o = value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
        return o == null ? UNKNOWN : o;
    }
}
