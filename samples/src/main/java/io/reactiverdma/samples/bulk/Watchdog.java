package io.reactiverdma.samples.bulk;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * Ticks on Reactor's parallel scheduler while a transfer runs: prints its progress line (at most once a
 * second) and fails when the byte count did not move for the stall timeout.
 */
final class Watchdog {
    private Watchdog() {
    }

    /**
     * A {@code Mono} that never emits: it errors with {@code onStall.apply(bytes)} once {@code bytes} stayed
     * the same for {@code stallTimeout}. Cancelling it stops the ticks.
     *
     * @param totalBytes  the transfer's size; negative while it is not known (no progress line then)
     * @param progressLog receives the progress lines; null for none
     */
    static <T> Mono<T> watch(LongSupplier bytes, LongSupplier totalBytes, Duration stallTimeout,
            Consumer<String> progressLog,
            LongFunction<BulkTransferException> onStall) {
        return Mono.defer(() -> {
            long startNs = System.nanoTime();
            Progress progress = new Progress(startNs, Progress.DEFAULT_INTERVAL_NS);
            long stallNs = stallTimeout.toNanos();
            long[] last = {-1, startNs}; // bytes at the last change, and when
            Duration tick = Duration.ofMillis(Math.max(10, Math.min(250, stallTimeout.toMillis() / 4)));
            return Flux.interval(tick, tick)
                    .handle((t, sink) -> {
                        long now = System.nanoTime();
                        long b = bytes.getAsLong();
                        long total = totalBytes.getAsLong();
                        if (progressLog != null && total >= 0) {
                            progress.line(b, total, now).ifPresent(progressLog);
                        }
                        if (b != last[0]) {
                            last[0] = b;
                            last[1] = now;
                        } else if (now - last[1] >= stallNs) {
                            sink.error(onStall.apply(b));
                        }
                    })
                    .then(Mono.never());
        });
    }
}
