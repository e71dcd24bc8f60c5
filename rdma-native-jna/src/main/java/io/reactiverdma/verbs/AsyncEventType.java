package io.reactiverdma.verbs;

/** {@code enum ibv_event_type}: the kind of an {@link AsyncEvent}, and which object it concerns. */
public enum AsyncEventType {
    CQ_ERR(Element.CQ),
    QP_FATAL(Element.QP),
    QP_REQ_ERR(Element.QP),
    QP_ACCESS_ERR(Element.QP),
    COMM_EST(Element.QP),
    SQ_DRAINED(Element.QP),
    PATH_MIG(Element.QP),
    PATH_MIG_ERR(Element.QP),
    DEVICE_FATAL(Element.DEVICE),
    PORT_ACTIVE(Element.PORT),
    PORT_ERR(Element.PORT),
    LID_CHANGE(Element.PORT),
    PKEY_CHANGE(Element.PORT),
    SM_CHANGE(Element.PORT),
    SRQ_ERR(Element.SRQ),
    SRQ_LIMIT_REACHED(Element.SRQ),
    QP_LAST_WQE_REACHED(Element.QP),
    CLIENT_REREGISTER(Element.PORT),
    GID_CHANGE(Element.PORT),
    WQ_FATAL(Element.WQ),
    /** A value this enum does not know. */
    UNKNOWN(Element.DEVICE);

    /** Which member of {@code ibv_async_event.element} is valid for an event type. */
    public enum Element {
        CQ, QP, SRQ, WQ, PORT, DEVICE
    }

    private final Element element;

    AsyncEventType(Element element) {
        this.element = element;
    }

    /** The C enum value (the ordinal, except for UNKNOWN which is -1). */
    public int value() {
        return this == UNKNOWN ? -1 : ordinal();
    }

    /** Which object the event is about. */
    public Element element() {
        return element;
    }

    public static AsyncEventType of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }

    /** libibverbs' text ({@code ibv_event_type_str}), for example "SRQ limit reached". */
    public String describe() {
        return Verbs.eventTypeStr(value());
    }
}
