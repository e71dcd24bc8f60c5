package io.reactiverdma.verbs;

/** {@code enum ibv_gid_type}. RoCEv2 GIDs are routable (UDP/IP); rdma_cm uses them. */
public enum GidType {
    IB(0),
    ROCE_V1(1),
    ROCE_V2(2),
    /** The type could not be read (an rdma-core without ibv_query_gid_ex) or is not listed. */
    UNKNOWN(-1);

    private final int value;

    GidType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public static GidType of(int value) {
        return value >= 0 && value <= 2 ? values()[value] : UNKNOWN;
    }
}
