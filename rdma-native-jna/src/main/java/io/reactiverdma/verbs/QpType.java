package io.reactiverdma.verbs;

/** {@code enum ibv_qp_type}. Soft-RoCE (rxe) supports RC, UC and UD. */
public enum QpType {
    RC(2),
    UC(3),
    UD(4),
    RAW_PACKET(8),
    XRC_SEND(9),
    XRC_RECV(10),
    DRIVER(0xff);

    private final int value;

    QpType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    /** The constant for a C value, or null if not listed. */
    public static QpType of(int value) {
        for (QpType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        return null;
    }
}
