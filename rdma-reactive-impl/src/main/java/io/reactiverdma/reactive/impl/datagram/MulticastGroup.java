package io.reactiverdma.reactive.impl.datagram;

import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;

/**
 * One {@code join(group)}: its state on the rdma_cm thread (joining, joined, left), the destination sends to
 * the group use once it is joined, and the stream its datagrams go to.
 */
final class MulticastGroup {
    final InetSocketAddress group;
    final DatagramStream stream;
    /** Emits the group once MULTICAST_JOIN arrived (or fails with the join's error). */
    final Sinks.One<InetSocketAddress> joined = Sinks.one();
    /** Set on the rdma_cm thread at MULTICAST_JOIN; read by senders. */
    volatile Destination destination;
    /** rdma_cm thread: the subscriber cancelled or the endpoint closed; a join still in flight is undone. */
    boolean left;

    MulticastGroup(InetSocketAddress group, DatagramStream stream) {
        this.group = group;
        this.stream = stream;
    }
}
