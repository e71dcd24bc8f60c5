package io.reactiverdma.samples.gateway;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;

/**
 * What the HTTP endpoints need from the key-value service: {@link KvGateway} over RDMA, or a stub in the
 * controller's host tests. Every method is lazy and non-blocking; errors are the key-value client's typed
 * exceptions ({@code KvException}, the API's {@code RdmaException}s) or {@link GatewayUnavailableException}.
 */
public interface KeyValueStore {
    /** Emits the value, or completes empty when the key has none. */
    Mono<byte[]> get(String key);

    /** Stores the value; completes when the server has it. */
    Mono<Void> put(String key, byte[] value);

    /** Emits true when a value was removed, false when there was none. */
    Mono<Boolean> delete(String key);

    /** Adds {@code delta} to the counter (created at 0 on first use); emits the value before adding. */
    Mono<Long> increment(String counter, long delta);

    /**
     * The value in chunks of at most {@code chunkSizeBytes}, read as the subscriber asks for them. Each
     * buffer is the subscriber's to keep. Fails with
     * {@code KvException} (NOT_FOUND) when the key has no value.
     */
    Flux<ByteBuffer> download(String key, int chunkSizeBytes);
}
