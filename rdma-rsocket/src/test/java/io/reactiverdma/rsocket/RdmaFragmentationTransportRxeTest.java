package io.reactiverdma.rsocket;

/** {@link RdmaTransportRxeTest} with RSocket fragmenting every frame above a random mtu of 256..511 bytes. */
class RdmaFragmentationTransportRxeTest extends RdmaTransportRxeTest {
    @Override
    boolean fragmented() {
        return true;
    }
}
