package io.reactiverdma.reactive.impl.verbs;

import reactor.util.annotation.Nullable;

/**
 * {@code struct rdma_conn_param} as the engine fills it for {@code rdma_connect} and {@code rdma_accept}.
 *
 * @param responderResources RDMA READs/atomics this side serves at once
 * @param initiatorDepth     RDMA READs/atomics this side issues at once
 * @param retryCount         transport retries after an ACK timeout (0..7)
 * @param rnrRetryCount      retries after receiver-not-ready (0..6)
 * @param privateData        for the peer, or null for none
 */
public record ConnectSpec(int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount,
                          @Nullable byte[] privateData) {
}
