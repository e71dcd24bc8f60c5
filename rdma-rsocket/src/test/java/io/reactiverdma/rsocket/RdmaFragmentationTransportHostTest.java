package io.reactiverdma.rsocket;

import org.junit.jupiter.api.Test;

/** {@link RdmaTransportHostTest} with RSocket fragmenting every frame above a random mtu of 256..511 bytes. */
class RdmaFragmentationTransportHostTest extends RdmaTransportHostTest {
    @Override
    boolean fragmented() {
        return true;
    }

    /**
     * Not a test here (an override without {@code @Test} is not run): it cannot pass with fragmentation on
     * RDMA, since RSocket never fragments a METADATA_PUSH and the suite's 262 KB of metadata does not fit one
     * 4 KiB receive buffer. What happens instead is {@link #aMetadataPushAboveTheFrameLimitIsRefusedBeforeAnythingIsSent}.
     */
    @Override
    public void largePayloadMetadataPush10() {
        throw new UnsupportedOperationException("RSocket never fragments METADATA_PUSH: see the Javadoc");
    }

    /**
     * Not a test here (an override without {@code @Test} is not run): its payloads (a few tens of bytes) are never
     * fragmented, so its 200,000 frames each way are {@link RdmaTransportHostTest}'s, on 4 KiB receive
     * buffers instead of 1 MiB; {@code requestChannel20_000} still runs them on 4 KiB buffers here. It took
     * 40-50 s of each host lane in CI, beside the same test in the unfragmented suite.
     */
    @Override
    public void requestChannel200_000() {
        super.requestChannel200_000();
    }

    @Test
    void aMetadataPushAboveTheFrameLimitIsRefusedBeforeAnythingIsSent() {
        metadataPushAboveTheFrameLimitIsRefusedBeforeAnythingIsSent();
    }
}
