package io.reactiverdma.verbs;

/** {@code enum ibv_wc_status}: the outcome of a work request, in {@link WorkCompletions#status(int)}. */
public enum WcStatus {
    SUCCESS(0),
    LOC_LEN_ERR(1),
    LOC_QP_OP_ERR(2),
    LOC_EEC_OP_ERR(3),
    LOC_PROT_ERR(4),
    WR_FLUSH_ERR(5),
    MW_BIND_ERR(6),
    BAD_RESP_ERR(7),
    LOC_ACCESS_ERR(8),
    REM_INV_REQ_ERR(9),
    REM_ACCESS_ERR(10),
    REM_OP_ERR(11),
    RETRY_EXC_ERR(12),
    RNR_RETRY_EXC_ERR(13),
    LOC_RDD_VIOL_ERR(14),
    REM_INV_RD_REQ_ERR(15),
    REM_ABORT_ERR(16),
    INV_EECN_ERR(17),
    INV_EEC_STATE_ERR(18),
    FATAL_ERR(19),
    RESP_TIMEOUT_ERR(20),
    GENERAL_ERR(21),
    TM_ERR(22),
    TM_RNDV_INCOMPLETE(23),
    /** A value this enum does not know (a newer rdma-core); read the raw code with statusCode(i). */
    UNKNOWN(-1);

    private static final WcStatus[] BY_VALUE = new WcStatus[24];

    static {
        for (WcStatus s : values()) {
            if (s.value >= 0) {
                BY_VALUE[s.value] = s;
            }
        }
    }

    private final int value;

    WcStatus(int value) {
        this.value = value;
    }

    /** The C enum value. */
    public int value() {
        return value;
    }

    /** The constant for a C value, {@link #UNKNOWN} for values this enum does not list. No allocation. */
    public static WcStatus of(int value) {
        return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : UNKNOWN;
    }

    /** libibverbs' text for this status ({@code ibv_wc_status_str}), for example "remote access error". */
    public String describe() {
        return Verbs.wcStatusStr(value);
    }
}
