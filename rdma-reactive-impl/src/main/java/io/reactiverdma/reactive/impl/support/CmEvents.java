package io.reactiverdma.reactive.impl.support;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.ConnectionEvent;

/** rdma_cm's event types as the API's connection event types. */
public final class CmEvents {
    private CmEvents() {
    }

    public static ConnectionEvent.Type map(CmEventType t) {
        return switch (t) {
            case ADDR_RESOLVED -> ConnectionEvent.Type.ADDRESS_RESOLVED;
            case ADDR_ERROR -> ConnectionEvent.Type.ADDRESS_ERROR;
            case ROUTE_RESOLVED -> ConnectionEvent.Type.ROUTE_RESOLVED;
            case ROUTE_ERROR -> ConnectionEvent.Type.ROUTE_ERROR;
            case CONNECT_REQUEST -> ConnectionEvent.Type.CONNECT_REQUEST;
            case CONNECT_RESPONSE, ESTABLISHED -> ConnectionEvent.Type.ESTABLISHED;
            case CONNECT_ERROR, MULTICAST_ERROR -> ConnectionEvent.Type.CONNECT_ERROR;
            case UNREACHABLE -> ConnectionEvent.Type.UNREACHABLE;
            case REJECTED -> ConnectionEvent.Type.REJECTED;
            case DISCONNECTED -> ConnectionEvent.Type.DISCONNECTED;
            case DEVICE_REMOVAL -> ConnectionEvent.Type.DEVICE_REMOVAL;
            case ADDR_CHANGE -> ConnectionEvent.Type.ADDRESS_CHANGE;
            case TIMEWAIT_EXIT -> ConnectionEvent.Type.TIMEWAIT_EXIT;
            case MULTICAST_JOIN -> ConnectionEvent.Type.ESTABLISHED;
        };
    }
}
