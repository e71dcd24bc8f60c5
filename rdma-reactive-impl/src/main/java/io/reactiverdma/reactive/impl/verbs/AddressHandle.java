package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.verbs.SendWorkRequests;

/**
 * An address handle ({@code struct ibv_ah}): where UD sends go. Made by {@link CmId#createAddressHandle} from
 * what rdma_cm resolved (a peer's route, a multicast group), or by {@link CmId#createReplyAddressHandle} from
 * a received datagram's GRH. Destroyed only after no posted send names it any more.
 */
public interface AddressHandle {
    /** Fills request {@code i} of {@code chain} with this destination ({@code wr.ud}). */
    void target(SendWorkRequests chain, int i, int remoteQpn, int remoteQkey);

    /** {@code ibv_destroy_ah}; idempotent. */
    void close();
}
