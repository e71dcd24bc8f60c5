package io.reactiverdma.rsocket;

/**
 * {@link RdmaTransportRxeTest} with RSocket fragmenting every frame above a random mtu of 256..511 bytes. Not yet
 * run on rxe (it inherits the "rxe-has-skips" tag, so only {@code NATIVE_TESTS_WITH_SKIPS=1} runs it); it passes
 * on the loopback device ({@code RdmaFragmentationTransportHostTest}).
 */
class RdmaFragmentationTransportRxeTest extends RdmaTransportRxeTest {
    @Override
    boolean fragmented() {
        return true;
    }
}
