package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.impl.support.CmEvents;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;

/**
 * What rdma_cm says about a set-up connection (rdma_cm thread): each event is recorded as a
 * {@link ConnectionEvent}, and ESTABLISHED establishes the connection, while a disconnect, a removed device or
 * a failed connect closes it (handed to its poller).
 */
final class ConnectionCmEvents {
    private ConnectionCmEvents() {
    }

    static void on(EngineConnection c, CmEventInfo e) {
        c.emit(new ConnectionEvent(CmEvents.map(e.type()), e.status(), e.privateDataTrimmed(), c.remoteAddress()));
        switch (e.type()) {
            case ESTABLISHED -> c.established(null, null);
            case DISCONNECTED -> c.closeFromAnyThread(null);
            case DEVICE_REMOVAL -> {
                c.closeFromAnyThread(new ConnectionClosedException(c.description() + ": the RDMA device was removed"));
                c.device().removed();
            }
            case REJECTED, UNREACHABLE, CONNECT_ERROR -> c.closeFromAnyThread(new ConnectionClosedException(
                    c.description() + ": connection failed: " + e));
            default -> {
            }
        }
    }
}
