package io.reactiverdma.samples.gateway;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A timeout for every element of a stream that runs only while the subscriber has asked for one: each
 * element asked for must arrive within the limit of the request for it (or of the element before it), but
 * a subscriber that asks for nothing (a slow HTTP client whose socket is full) waits as long as it likes.
 * Reactor's own {@code timeout} counts from element to element whatever the demand, so a slow reader would
 * be cut off; a timeout on the first element only lets a backend that stalls mid-stream hold the response
 * open for ever.
 */
final class ChunkTimeout {
    private ChunkTimeout() {
    }

    /**
     * {@code source}, failing with {@link TimeoutException} when an element that was asked for does not come
     * within {@code limit} (cancelling {@code source}). Its signals are {@code source}'s otherwise.
     */
    static <T> Flux<T> whileDemanded(Flux<T> source, Duration limit) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(limit, "limit");
        return Flux.defer(() -> {
            Demand demand = new Demand();
            return source
                    .timeout(demand.due(limit), element -> {
                        demand.delivered(); // before the next timer subscribes: it must see this element taken
                        return demand.due(limit);
                    })
                    .onErrorMap(TimeoutException.class, e -> new TimeoutException("no element within " + limit
                            + " of being asked for"))
                    .doOnRequest(demand::requested);
        });
    }

    /** What the subscriber asked for and has not received, and the timer waiting for it to be positive. */
    private static final class Demand {
        private final AtomicLong outstanding = new AtomicLong();
        private final AtomicReference<MonoSink<Void>> waiting = new AtomicReference<>();

        /** Completes after {@code limit} counted from when an element is outstanding. */
        Mono<Long> due(Duration limit) {
            return Mono.<Void>create(sink -> {
                waiting.set(sink);
                sink.onDispose(() -> waiting.compareAndSet(sink, null));
                if (outstanding.get() > 0) { // set before reading: a request after this read finds it
                    sink.success();
                }
            }).then(Mono.delay(limit));
        }

        void requested(long n) {
            outstanding.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
            MonoSink<Void> w = waiting.getAndSet(null);
            if (w != null) {
                w.success();
            }
        }

        void delivered() {
            outstanding.updateAndGet(a -> a == Long.MAX_VALUE ? a : a - 1);
        }
    }
}
