package io.reactiverdma.samples.gateway;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The HTTP endpoints. Values are raw bytes ({@code application/octet-stream}); errors are RFC 9457 problem
 * details ({@link GatewayErrors}). Every handler returns a {@code Mono}/{@code Flux} built on
 * {@link KeyValueStore}: no handler blocks the event loop.
 * <ul>
 *   <li>{@code GET /kv/{key}}: 200 with the value (one RDMA READ of the slot, then of the value), 404</li>
 *   <li>{@code PUT /kv/{key}} (body: the value): 204; 413 when larger than {@code gateway.max-value-size}</li>
 *   <li>{@code DELETE /kv/{key}}: 204 when removed, 404 when there was nothing</li>
 *   <li>{@code POST /counters/{name}/increment?delta=N} (default 1): 200 with
 *       {@code {"counter","previous","current"}} (a remote fetch-and-add)</li>
 *   <li>{@code GET /kv/{key}/stream}: the value streamed in chunks of {@code gateway.download-chunk-size},
 *       each one RDMA READ, read only as the HTTP response takes them; each chunk the response asked for
 *       must come within {@code gateway.request-timeout} (else the response is cut off), while a slow HTTP
 *       client that asks for nothing may take as long as it likes</li>
 * </ul>
 */
@RestController
public class KvController {
    private final KeyValueStore store;
    private final GatewayProperties properties;
    /** Where a PUT's value is staged for RDMA: off the Netty event loop that received it. */
    private final Scheduler copies = Schedulers.boundedElastic();

    public KvController(KeyValueStore store, GatewayProperties properties) {
        this.store = store;
        this.properties = properties;
    }

    /** A counter after an increment: its value before and after adding. */
    public record CounterResponse(String counter, long previous, long current) {
    }

    @GetMapping(path = "/kv/{key}", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public Mono<byte[]> get(@PathVariable("key") String key) {
        return store.get(key).switchIfEmpty(Mono.error(() -> new KeyNotFoundException(key)));
    }

    @PutMapping("/kv/{key}")
    public Mono<ResponseEntity<Void>> put(@PathVariable("key") String key, ServerHttpRequest request) {
        int max = (int) properties.maxValueSize().toBytes();
        long declared = request.getHeaders().getContentLength();
        if (declared > max) {
            // Refused from the header, before any of the body is read.
            return Mono.error(new DataBufferLimitException(tooLarge(declared, max)));
        }
        return DataBufferUtils.join(request.getBody(), max)
                .onErrorMap(DataBufferLimitException.class, e -> new DataBufferLimitException(tooLarge(-1, max)))
                .map(KvController::bytes) // on the event loop, as Spring's own byte[] decoder does
                .defaultIfEmpty(new byte[0])
                // The PUT continues on the bounded elastic scheduler: a large value's copy into the key-value
                // client's staging buffer (up to 4 MB) runs where the PUT is subscribed, not on the event loop.
                // (A byte[] crosses the hop: nothing to release if the request is cancelled on the way.)
                .publishOn(copies)
                .flatMap(value -> store.put(key, value))
                .then(Mono.fromSupplier(() -> ResponseEntity.noContent().build()));
    }

    private static String tooLarge(long size, int max) {
        return "the value" + (size >= 0 ? " (" + size + " bytes)" : "") + " is larger than gateway.max-value-size ("
                + max + " bytes)";
    }

    private static byte[] bytes(DataBuffer joined) {
        try {
            byte[] b = new byte[joined.readableByteCount()];
            joined.read(b);
            return b;
        } finally {
            DataBufferUtils.release(joined);
        }
    }

    @DeleteMapping("/kv/{key}")
    public Mono<ResponseEntity<Void>> delete(@PathVariable("key") String key) {
        return store.delete(key).flatMap(removed -> removed
                ? Mono.just(ResponseEntity.noContent().<Void>build())
                : Mono.error(new KeyNotFoundException(key)));
    }

    @PostMapping("/counters/{name}/increment")
    public Mono<CounterResponse> increment(@PathVariable("name") String name,
            @RequestParam(name = "delta", defaultValue = "1") long delta) {
        return store.increment(name, delta).map(previous -> new CounterResponse(name, previous, previous + delta));
    }

    /**
     * Streams the value: each chunk (a heap buffer the key-value client hands over) is wrapped, not copied,
     * as a response buffer. The response asks for chunks as the connection can take them (Reactive Streams
     * demand) and the key-value client READs at most a few chunks ahead of that demand, so a slow HTTP client
     * slows the RDMA READs down instead of piling the value up in memory.
     */
    @GetMapping(path = "/kv/{key}/stream", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public Flux<DataBuffer> stream(@PathVariable("key") String key, ServerHttpResponse response) {
        DataBufferFactory buffers = response.bufferFactory();
        return ChunkTimeout.whileDemanded(store.download(key, (int) properties.downloadChunkSize().toBytes()),
                        properties.requestTimeout())
                .map(buffers::wrap);
    }
}
