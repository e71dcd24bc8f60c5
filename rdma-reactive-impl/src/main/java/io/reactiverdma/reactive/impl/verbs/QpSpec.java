package io.reactiverdma.reactive.impl.verbs;

import reactor.util.annotation.Nullable;

/**
 * What the engine asks of a new RC queue pair ({@code struct ibv_qp_init_attr}): one SGE per request.
 *
 * @param maxSendWr     send queue depth
 * @param maxRecvWr     receive queue depth (ignored with an SRQ)
 * @param maxInlineData inline bytes asked for (the device may grant less: {@link QueuePair#maxInlineData()})
 * @param srq           the shared receive queue its receives come from, or null for its own receive queue
 */
public record QpSpec(int maxSendWr, int maxRecvWr, int maxInlineData, @Nullable SharedReceiveQueue srq) {
    public QpSpec(int maxSendWr, int maxRecvWr, int maxInlineData) {
        this(maxSendWr, maxRecvWr, maxInlineData, null);
    }
}
