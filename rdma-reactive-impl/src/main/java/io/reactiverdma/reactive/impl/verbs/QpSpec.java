package io.reactiverdma.reactive.impl.verbs;

/**
 * What the engine asks of a new RC queue pair ({@code struct ibv_qp_init_attr}): one SGE per request.
 *
 * @param maxSendWr     send queue depth
 * @param maxRecvWr     receive queue depth
 * @param maxInlineData inline bytes asked for (the device may grant less: {@link QueuePair#maxInlineData()})
 */
public record QpSpec(int maxSendWr, int maxRecvWr, int maxInlineData) {
}
