package io.reactiverdma.samples.gateway;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import java.time.Duration;
import java.util.Objects;

/**
 * The gateway's own settings ({@code gateway.*}); where the key-value server is comes from
 * {@code reactive-rdma.client.*} (the auto-configured RdmaClient).
 *
 * @param maxValueSize      the largest PUT body accepted; a larger one is refused with 413 before the body is
 *                          read to its end (the server may allow less: then it refuses, also 413)
 * @param downloadChunkSize the size of each RDMA READ of a streamed download (1B..4MB, the engine's largest
 *                          buffer: a larger one fails the start)
 * @param requestTimeout    limit for one key-value operation (a streamed download: for each chunk the HTTP
 *                          response asked for, counted while it waits for it); must be longer than
 *                          reactive-rdma.client.connect-timeout
 * @param largePutBuffers   large PUTs (values that do not fit a message) in flight at once: each holds one
 *                          registered buffer of the server's largest value size (4 MiB by default), registered
 *                          once; a PUT beyond them is answered 503 with Retry-After
 * @param reconnectMinBackoff the first pause before dialling the key-value server again after a failure
 * @param reconnectMaxBackoff the longest pause (the backoff doubles per failure up to it, with jitter)
 */
@ConfigurationProperties("gateway")
public record GatewayProperties(@DefaultValue("4MB") DataSize maxValueSize,
                                @DefaultValue("64KB") DataSize downloadChunkSize,
                                @DefaultValue("10s") Duration requestTimeout,
                                @DefaultValue("4") int largePutBuffers,
                                @DefaultValue("100ms") Duration reconnectMinBackoff,
                                @DefaultValue("10s") Duration reconnectMaxBackoff) {
    /**
     * The largest download chunk: the engine's largest buffer ({@code RdmaMemory.maxAllocationSize()}, the
     * pool's 4 MiB slab), which each chunk's READ lands in.
     */
    public static final DataSize MAX_DOWNLOAD_CHUNK = DataSize.ofMegabytes(4);

    public GatewayProperties {
        Objects.requireNonNull(maxValueSize, "maxValueSize");
        Objects.requireNonNull(downloadChunkSize, "downloadChunkSize");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        if (maxValueSize.toBytes() < 0 || maxValueSize.toBytes() > Integer.MAX_VALUE - 1) {
            throw new IllegalArgumentException("gateway.max-value-size must be 0..2GB, got " + maxValueSize);
        }
        if (downloadChunkSize.toBytes() < 1 || downloadChunkSize.toBytes() > MAX_DOWNLOAD_CHUNK.toBytes()) {
            throw new IllegalArgumentException("gateway.download-chunk-size must be 1B to 4MB (the engine's largest"
                    + " buffer, which each chunk's READ lands in), got " + downloadChunkSize);
        }
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("gateway.request-timeout must be positive, got " + requestTimeout);
        }
        if (largePutBuffers < 1 || largePutBuffers > 1024) {
            throw new IllegalArgumentException("gateway.large-put-buffers must be 1..1024, got " + largePutBuffers);
        }
        Objects.requireNonNull(reconnectMinBackoff, "reconnectMinBackoff");
        Objects.requireNonNull(reconnectMaxBackoff, "reconnectMaxBackoff");
        if (reconnectMinBackoff.isNegative() || reconnectMinBackoff.isZero()
                || reconnectMaxBackoff.compareTo(reconnectMinBackoff) < 0) {
            throw new IllegalArgumentException("gateway.reconnect-min-backoff must be positive and at most"
                    + " gateway.reconnect-max-backoff, got " + reconnectMinBackoff + " and " + reconnectMaxBackoff);
        }
    }
}
