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
 * @param downloadChunkSize the size of each RDMA READ of a streamed download
 * @param requestTimeout    limit for one key-value operation (a streamed download: for each chunk)
 */
@ConfigurationProperties("gateway")
public record GatewayProperties(@DefaultValue("4MB") DataSize maxValueSize,
                                @DefaultValue("64KB") DataSize downloadChunkSize,
                                @DefaultValue("10s") Duration requestTimeout) {
    public GatewayProperties {
        Objects.requireNonNull(maxValueSize, "maxValueSize");
        Objects.requireNonNull(downloadChunkSize, "downloadChunkSize");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        if (maxValueSize.toBytes() < 0 || maxValueSize.toBytes() > Integer.MAX_VALUE - 1) {
            throw new IllegalArgumentException("gateway.max-value-size must be 0..2GB, got " + maxValueSize);
        }
        if (downloadChunkSize.toBytes() < 1 || downloadChunkSize.toBytes() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("gateway.download-chunk-size must be 1B..2GB, got " + downloadChunkSize);
        }
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("gateway.request-timeout must be positive, got " + requestTimeout);
        }
    }
}
