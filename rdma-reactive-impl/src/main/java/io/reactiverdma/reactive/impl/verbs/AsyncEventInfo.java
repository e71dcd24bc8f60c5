package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.verbs.AsyncEventType;

import reactor.util.annotation.Nullable;

/**
 * One asynchronous device event ({@code struct ibv_async_event}), acknowledged.
 *
 * @param type  what happened
 * @param port  the port of a port event, else -1
 * @param qpNum the QP number of a QP event, else -1
 * @param cq    the completion queue of a CQ event (one this stack created), else null
 * @param srq   the shared receive queue of an SRQ event (one this stack created), else null
 */
public record AsyncEventInfo(AsyncEventType type, int port, int qpNum, @Nullable CompletionQueue cq,
                             @Nullable SharedReceiveQueue srq) {
    public AsyncEventInfo(AsyncEventType type, int port, int qpNum, @Nullable CompletionQueue cq) {
        this(type, port, qpNum, cq, null);
    }
}
