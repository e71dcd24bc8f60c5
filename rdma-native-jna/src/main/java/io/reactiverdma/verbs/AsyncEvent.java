package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeResource;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * An asynchronous event from {@link VerbsContext#getAsyncEvent()}: a QP, CQ or SRQ error, a port state
 * change, an SRQ limit ... Must be acknowledged with {@link VerbsContext#ackAsyncEvent(AsyncEvent)}
 * (destroying the QP/CQ/SRQ it concerns waits for that, so closing one acknowledges its pending events).
 * <pre>
 * struct ibv_async_event {
 *     union {
 *         struct ibv_cq  *cq;
 *         struct ibv_qp  *qp;
 *         struct ibv_srq *srq;
 *         struct ibv_wq  *wq;
 *         int             port_num;
 *     } element;
 *     enum ibv_event_type event_type;
 * };
 * </pre>
 */
@NativeStruct(value = "struct ibv_async_event", header = "infiniband/verbs.h")
public final class AsyncEvent {
    public static final int SIZE = 16;
    @NativeField("element.cq")
    public static final int ELEMENT_CQ_OFFSET = 0;
    @NativeField("element.qp")
    public static final int ELEMENT_QP_OFFSET = 0;
    @NativeField("element.srq")
    public static final int ELEMENT_SRQ_OFFSET = 0;
    @NativeField("element.port_num")
    public static final int ELEMENT_PORT_NUM_OFFSET = 0;
    @NativeField("event_type")
    public static final int EVENT_TYPE_OFFSET = 8;

    private final int typeCode;
    private final long element;
    private final NativeResource resource;
    private volatile boolean acked;

    private AsyncEvent(int typeCode, long element, NativeResource resource) {
        this.typeCode = typeCode;
        this.element = element;
        this.resource = resource;
    }

    /** Reads the struct ibv_get_async_event filled; {@code lookup} names the QP/CQ/SRQ by address. */
    static AsyncEvent read(ByteBuffer b, java.util.function.LongFunction<NativeResource> lookup) {
        int type = b.getInt(EVENT_TYPE_OFFSET);
        long element = b.getLong(ELEMENT_QP_OFFSET);
        AsyncEventType.Element kind = AsyncEventType.of(type).element();
        if (kind == AsyncEventType.Element.PORT) {
            element = b.getInt(ELEMENT_PORT_NUM_OFFSET); // the other 4 bytes of the union are garbage
        }
        boolean isObject = kind != AsyncEventType.Element.PORT && kind != AsyncEventType.Element.DEVICE;
        return new AsyncEvent(type, element, isObject ? lookup.apply(element) : null);
    }

    /** Writes the struct back, as ibv_ack_async_event needs it. */
    void writeTo(ByteBuffer b) {
        if (type().element() == AsyncEventType.Element.PORT) {
            b.putInt(ELEMENT_PORT_NUM_OFFSET, (int) element);
        } else {
            b.putLong(ELEMENT_QP_OFFSET, element);
        }
        b.putInt(EVENT_TYPE_OFFSET, typeCode);
    }

    public AsyncEventType type() {
        return AsyncEventType.of(typeCode);
    }

    /** The raw {@code enum ibv_event_type} value. */
    public int typeCode() {
        return typeCode;
    }

    /** The port number of a port event, else -1. */
    public int portNum() {
        return type().element() == AsyncEventType.Element.PORT ? (int) element : -1;
    }

    /** Address of the QP/CQ/SRQ/WQ the event concerns (0 for port and device events). */
    public long elementAddress() {
        AsyncEventType.Element e = type().element();
        return e == AsyncEventType.Element.PORT || e == AsyncEventType.Element.DEVICE ? 0L : element;
    }

    /** The queue pair of a QP event, if it was created or adopted through this library's context. */
    public QueuePair queuePair() {
        return resource instanceof QueuePair q ? q : null;
    }

    /** The completion queue of a CQ event, if known. */
    public CompletionQueue completionQueue() {
        return resource instanceof CompletionQueue c ? c : null;
    }

    /** The SRQ of an SRQ event, if known. */
    public SharedReceiveQueue sharedReceiveQueue() {
        return resource instanceof SharedReceiveQueue s ? s : null;
    }

    public boolean isAcked() {
        return acked;
    }

    /** Marks acknowledged; false if it already was. */
    synchronized boolean markAcked() {
        if (acked) {
            return false;
        }
        acked = true;
        return true;
    }

    long rawElement() {
        return element;
    }

    @Override
    public String toString() {
        AsyncEventType t = type();
        String what = t.element() == AsyncEventType.Element.PORT ? "port " + element
                : resource != null ? resource.description() : "0x" + Long.toHexString(element);
        return "AsyncEvent{" + t + " (" + Verbs.eventTypeStr(typeCode) + "), " + what + "}";
    }
}
