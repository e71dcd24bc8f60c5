package io.reactiverdma.reactive.impl.cm;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A bind (a server's or a datagram endpoint's) made on the rdma_cm thread and handed to its subscriber, or,
 * when the subscriber cancelled first, disposed there: without it a {@code bindNow(timeout)} that timed out just
 * before the bind finished left the port bound, reachable only through the engine's shutdown. One
 * compare-and-set decides between the subscriber's cancel and the hand-over, as a client's connect does.
 */
public final class BindHandover {
    private static final int PENDING = 0;
    private static final int CANCELLED = 1;
    private static final int HANDED_OVER = 2;

    private BindHandover() {
    }

    /**
     * Per subscription: {@code open} run on the thread of the loop {@code cm} gives (and given it), its result emitted, or its failure mapped by
     * {@code typed} and emitted; cancelled before it ran, {@code open} is not run; cancelled while it ran, what
     * it made is disposed.
     */
    public static <T extends Disposable> Mono<T> on(Supplier<CmEventLoop> cm, Function<CmEventLoop, ? extends T> open,
            UnaryOperator<RuntimeException> typed) {
        return Mono.create(sink -> {
            AtomicInteger state = new AtomicInteger(PENDING);
            sink.onCancel(() -> state.compareAndSet(PENDING, CANCELLED));
            CmEventLoop loop = cm.get();
            loop.execute(() -> {
                if (state.get() == CANCELLED) {
                    return; // nothing made yet: nothing to undo
                }
                T made;
                try {
                    made = open.apply(loop);
                } catch (RuntimeException e) {
                    sink.error(typed.apply(e));
                    return;
                }
                if (state.compareAndSet(PENDING, HANDED_OVER)) {
                    sink.success(made);
                } else {
                    made.dispose();
                }
            });
        });
    }
}
