package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.verbs.AddressHandleAttributes;

/**
 * What an rdma_cm event on the UDP port space says about a destination ({@code param.ud}): a peer's
 * ESTABLISHED (its SIDR reply) or a MULTICAST_JOIN.
 *
 * @param remoteQpn  the peer's QP number (0xffffff for a multicast group)
 * @param qkey       the Q_Key to send with
 * @param attributes the address handle attributes to create the destination from
 */
public record DatagramRoute(int remoteQpn, int qkey, AddressHandleAttributes attributes) {
}
