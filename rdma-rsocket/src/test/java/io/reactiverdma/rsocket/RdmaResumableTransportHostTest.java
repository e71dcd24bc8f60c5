package io.reactiverdma.rsocket;

import java.time.Duration;

/**
 * {@link RdmaTransportHostTest} with RSocket's session resumption and random disconnects (the suite's own
 * resumable variant, as rsocket-java runs it for its local and WebSocket transports): each side closes every
 * RDMA connection 10 ms..1.5 s after its first frame, the client resumes over a new RDMA connection, and every
 * interaction must still deliver everything, in order, exactly once. Every frame whole (upstream's resumable
 * variants do not fragment either).
 */
class RdmaResumableTransportHostTest extends RdmaTransportHostTest {
    @Override
    boolean resumable() {
        return true;
    }

    /** Reconnects add up: upstream gives its resumable variants 3 minutes. */
    @Override
    public Duration getTimeout() {
        return Duration.ofMinutes(3);
    }

    /**
     * Not a test here (an override without {@code @Test} is not run), as upstream skips it for every resumable
     * transport: a METADATA_PUSH is a stream-0 frame, which resumption does not keep, so one sent as a connection
     * breaks is lost by design.
     */
    @Override
    public void metadataPush10() {
        throw new UnsupportedOperationException("not resumable by design: see the Javadoc");
    }

    /** Not a test here, as {@link #metadataPush10()}. */
    @Override
    public void largePayloadMetadataPush10() {
        throw new UnsupportedOperationException("not resumable by design: see the Javadoc");
    }
}
