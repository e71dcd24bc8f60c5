package io.reactiverdma.rsocket;

import org.junit.jupiter.api.Test;

/**
 * {@link RdmaTransportRxeTest} with RSocket fragmenting every frame above a random mtu of 256..511 bytes: the
 * same tests, less {@code largePayloadMetadataPush10} (cannot pass fragmented, see
 * {@link RdmaFragmentationTransportHostTest}) and the two 50-payload large tests (each large payload is about
 * 930 fragments: 46,500 to 93,000 fragments, too slow under emulation); {@code largePayloadFireAndForget10}
 * still reassembles large payloads here, and the fifty-payload tests run fragmented on the loopback device.
 */
class RdmaFragmentationTransportRxeTest extends RdmaTransportRxeTest {
    @Override
    boolean fragmented() {
        return true;
    }

    /** Not a test: RSocket never fragments METADATA_PUSH (see {@link RdmaFragmentationTransportHostTest}). */
    @Override
    public void largePayloadMetadataPush10() {
        throw new UnsupportedOperationException("RSocket never fragments METADATA_PUSH");
    }

    /** Left out on rxe fragmented (93,000 fragments); runs on the loopback device. */
    @Override
    public void largePayloadRequestChannel50() {
        super.largePayloadRequestChannel50();
    }

    /** Left out on rxe fragmented (46,500 fragments); runs on the loopback device. */
    @Override
    public void largePayloadRequestResponse50() {
        super.largePayloadRequestResponse50();
    }

    @Test
    void aMetadataPushAboveTheFrameLimitIsRefusedBeforeAnythingIsSent() {
        metadataPushAboveTheFrameLimitIsRefusedBeforeAnythingIsSent();
    }
}
