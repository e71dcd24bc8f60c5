package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.verbs.WcStatus;

/**
 * Where a completion of one connection's work goes: the credit-word handshake's own steps, a receive (to
 * the receive queue), or a send-queue request (to the send queue, which also ends the unsignalled requests
 * posted before it); counted in the connection's metrics. An error status (not a flush) becomes an
 * {@link RdmaCompletionException}, recorded as the connection's close cause before the request is finished
 * (so every flush after it names it) and returned, so the connection closes with it. Poller thread only;
 * allocates nothing for a successful completion.
 */
final class ConnectionCompletions {
    private final EngineConnection c;

    ConnectionCompletions(EngineConnection c) {
        this.c = c;
    }

    /** Routes one completion; returns its failure, or null for a success or a flush. */
    RdmaCompletionException route(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm,
            int wcFlags) {
        assert OwnerThread.check(c.poller);
        OperationType type = p.type;
        boolean success = status == WcStatus.SUCCESS.value();
        boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
        RdmaCompletionException failure = null;
        if (!success && !flushed) {
            failure = new RdmaCompletionException(type, status, WcStatus.of(status).name(), vendorErr,
                    p.operation == PostedRequests.PROBE ? c.description() + " (its idle probe, a zero-length RDMA "
                            + "WRITE posted after " + c.config().option(RdmaOption.IDLE_PROBE_INTERVAL)
                            + " without traffic)" : c.description());
            c.metrics.completionError(WcStatus.of(status).name());
            if (p.operation == PostedRequests.PROBE) {
                // Nobody else would hear of it (nothing of the user's was outstanding): say why it closes.
                EngineLog.warn(c.description() + ": its idle probe was not acknowledged ("
                        + WcStatus.of(status).name() + "); the peer is gone, closing");
            }
            c.failedWith(failure);
        }
        if (p.operation instanceof CreditWordHandshake.Step step) {
            long latencyNs = System.nanoTime() - p.postedNs;
            c.resources.cq.pending.free(p);
            c.metrics.outstanding(-1);
            c.metrics.completed(type, success, flushed, latencyNs, 0);
            c.handshake.completed(step, success);
        } else if (type == OperationType.RECEIVE) {
            int receiveIndex = p.receiveIndex;
            long latencyNs = System.nanoTime() - p.postedNs;
            c.resources.cq.pending.free(p);
            c.metrics.outstanding(-1);
            c.metrics.completed(type, success, flushed, latencyNs, success ? byteLen : 0);
            c.receive.completed(receiveIndex, success, opcode, byteLen, imm, wcFlags);
        } else {
            c.send.completed(p, success, flushed, failure); // and the unsignalled requests posted before it
        }
        return failure;
    }
}
