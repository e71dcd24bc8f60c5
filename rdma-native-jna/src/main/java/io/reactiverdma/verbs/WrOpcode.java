package io.reactiverdma.verbs;

/** {@code enum ibv_wr_opcode}: the operation of a send work request ({@link SendWorkRequests}). */
public enum WrOpcode {
    RDMA_WRITE(0),
    RDMA_WRITE_WITH_IMM(1),
    SEND(2),
    SEND_WITH_IMM(3),
    RDMA_READ(4),
    ATOMIC_CMP_AND_SWP(5),
    ATOMIC_FETCH_AND_ADD(6),
    LOCAL_INV(7),
    BIND_MW(8),
    SEND_WITH_INV(9),
    TSO(10),
    DRIVER1(11),
    ATOMIC_WRITE(15);

    private static final WrOpcode[] BY_VALUE = new WrOpcode[16];

    static {
        for (WrOpcode o : values()) {
            BY_VALUE[o.value] = o;
        }
    }

    private final int value;

    WrOpcode(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    /** The constant for a C value, or null if not listed. */
    public static WrOpcode of(int value) {
        return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
    }
}
