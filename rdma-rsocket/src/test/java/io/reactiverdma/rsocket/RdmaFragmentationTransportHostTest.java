package io.reactiverdma.rsocket;

/** {@link RdmaTransportHostTest} with RSocket fragmenting every frame above a random mtu of 256..511 bytes. */
class RdmaFragmentationTransportHostTest extends RdmaTransportHostTest {
    @Override
    boolean fragmented() {
        return true;
    }
}
