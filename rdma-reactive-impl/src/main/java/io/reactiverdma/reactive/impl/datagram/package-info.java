/**
 * Unreliable datagrams (UD) and multicast: {@link io.reactiverdma.reactive.impl.datagram.EngineDatagramEndpoint}
 * owns one UD queue pair on rdma_cm's UDP port space, its receive and send buffers and the address handles of
 * the peers and groups it sends to; its completion queue is polled by a
 * {@link io.reactiverdma.reactive.impl.completion.CompletionPoller} like connections' are.
 */
package io.reactiverdma.reactive.impl.datagram;
