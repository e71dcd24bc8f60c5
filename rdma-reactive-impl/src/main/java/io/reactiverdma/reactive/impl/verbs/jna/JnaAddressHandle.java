package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.AddressHandle;
import io.reactiverdma.verbs.SendWorkRequests;

/** A real {@code ibv_ah}. */
final class JnaAddressHandle implements AddressHandle {
    private final io.reactiverdma.verbs.AddressHandle ah;

    JnaAddressHandle(io.reactiverdma.verbs.AddressHandle ah) {
        this.ah = ah;
    }

    @Override
    public void target(SendWorkRequests chain, int i, int remoteQpn, int remoteQkey) {
        chain.ud(i, ah, remoteQpn, remoteQkey);
    }

    @Override
    public void close() {
        ah.close();
    }
}
