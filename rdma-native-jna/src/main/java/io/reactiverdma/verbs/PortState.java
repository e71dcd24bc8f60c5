package io.reactiverdma.verbs;

/** {@code enum ibv_port_state}. Only {@link #ACTIVE} ports carry traffic. */
public enum PortState {
    NOP(0),
    DOWN(1),
    INIT(2),
    ARMED(3),
    ACTIVE(4),
    ACTIVE_DEFER(5),
    UNKNOWN(-1);

    private final int value;

    PortState(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public static PortState of(int value) {
        return value >= 0 && value <= 5 ? values()[value] : UNKNOWN;
    }

    /** libibverbs' text ({@code ibv_port_state_str}), for example "active". */
    public String describe() {
        return Verbs.portStateStr(value);
    }
}
