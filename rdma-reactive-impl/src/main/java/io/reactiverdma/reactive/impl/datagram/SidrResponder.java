package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;

import java.util.function.BooleanSupplier;

/**
 * The listening id's handler: a peer resolving this endpoint (a SIDR request) is answered with the data QP's
 * number, or rejected once the endpoint closes; the request's id goes either way. rdma_cm thread.
 */
final class SidrResponder implements CmEventLoop.Handler {
    private final String description;
    private final int qpNum;
    private final BooleanSupplier closing;

    SidrResponder(String description, int qpNum, BooleanSupplier closing) {
        this.description = description;
        this.qpNum = qpNum;
        this.closing = closing;
    }

    @Override
    public void onEvent(CmEventInfo e) {
        if (e.type() != CmEventType.CONNECT_REQUEST) {
            return;
        }
        CmId request = e.id();
        try {
            if (closing.getAsBoolean()) {
                request.reject(new byte[0]);
            } else {
                request.acceptDatagram(qpNum);
            }
        } catch (RuntimeException ex) {
            EngineLog.error(description + ": answering a SIDR request failed", ex);
        } finally {
            request.close();
        }
    }
}
