package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

import java.util.function.Consumer;

/** Operations for the tests of other packages (the named factories are package-private). */
public final class TestOperations {
    private TestOperations() {
    }

    /**
     * A {@code Mono<Long>} whose subscription makes a FETCH_AND_ADD of 1 on an 8-byte word at 0x1000 (rkey 7),
     * with {@code word} (held, the engine's own) as its result word, and gives it to {@code made}; nothing
     * submits it (the test completes it).
     */
    public static Mono<Long> fetchAndAdd(EngineBuffer word, Consumer<Operation> made) {
        return new Mono<>() {
            @Override
            public void subscribe(CoreSubscriber<? super Long> actual) {
                Operation op = Operation.atomic(null, OperationType.FETCH_AND_ADD, word, RemoteRegion.of(0x1000, 8, 7), 1, 0);
                op.subscribe(actual);
                made.accept(op);
            }
        };
    }
}
