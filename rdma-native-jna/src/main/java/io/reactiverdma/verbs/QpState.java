package io.reactiverdma.verbs;

/** {@code enum ibv_qp_state}. */
public enum QpState {
    RESET(0),
    INIT(1),
    RTR(2),
    RTS(3),
    SQD(4),
    SQE(5),
    ERR(6),
    UNKNOWN(7);

    private final int value;

    QpState(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public static QpState of(int value) {
        return value >= 0 && value < 7 ? values()[value] : UNKNOWN;
    }
}
