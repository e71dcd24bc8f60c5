package io.reactiverdma.cm;

/** {@code enum rdma_cm_event_type}, in C order (the ordinal is the C value). */
public enum CmEventType {
    ADDR_RESOLVED,
    ADDR_ERROR,
    ROUTE_RESOLVED,
    ROUTE_ERROR,
    CONNECT_REQUEST,
    CONNECT_RESPONSE,
    CONNECT_ERROR,
    UNREACHABLE,
    REJECTED,
    ESTABLISHED,
    DISCONNECTED,
    DEVICE_REMOVAL,
    MULTICAST_JOIN,
    MULTICAST_ERROR,
    ADDR_CHANGE,
    TIMEWAIT_EXIT;

    private static final CmEventType[] VALUES = values();

    /** The C value. */
    public int value() {
        return ordinal();
    }

    /** The type of C value {@code value}. */
    public static CmEventType of(int value) {
        if (value < 0 || value >= VALUES.length) {
            throw new IllegalArgumentException("unknown rdma_cm_event_type " + value);
        }
        return VALUES[value];
    }

    /** librdmacm's own name for it ({@code rdma_event_str}), for example "RDMA_CM_EVENT_ESTABLISHED". */
    public String cName() {
        return LibRdmacm.rdma_event_str(value());
    }

    /** True for the events that end a connection attempt without a connection. */
    public boolean isConnectFailure() {
        return this == ADDR_ERROR || this == ROUTE_ERROR || this == CONNECT_ERROR || this == UNREACHABLE
                || this == REJECTED;
    }
}
