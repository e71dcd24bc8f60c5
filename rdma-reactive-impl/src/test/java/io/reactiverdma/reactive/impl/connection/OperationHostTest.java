package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.FakeRegistrar;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import io.reactiverdma.reactive.RemoteRegion;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An operation's signal and its buffer holds: atomics' results, owned vs. caller's buffers, cancellation. */
class OperationHostTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final BufferPool pool = new BufferPool(new FakeRegistrar(), 4096, "operation host test");

    @AfterEach
    void close() {
        pool.close();
    }

    /**
     * A Mono whose subscription makes the operation with its named factory; a cancel only marks it (there is
     * no queue here to take it out of).
     */
    private static Mono<Object> mono(OperationType type, EngineBuffer local, boolean ownsLocal,
            AtomicReference<Operation> created) {
        return new Mono<>() {
            @Override
            public void subscribe(CoreSubscriber<? super Object> actual) {
                Operation op = make(type, local, ownsLocal);
                op.subscriber = actual;
                created.set(op);
                actual.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                        op.request(n);
                    }

                    @Override
                    public void cancel() {
                        op.cancelled = true;
                    }
                });
            }
        };
    }

    private static Operation make(OperationType type, EngineBuffer local, boolean ownsLocal) {
        return switch (type) {
            case SEND, SEND_WITH_IMMEDIATE -> Operation.send(null, type, local, ownsLocal, local.length(), 7);
            case WRITE, WRITE_WITH_IMMEDIATE, READ -> Operation.oneSided(null, type, local,
                    RemoteRegion.of(0x2000, 1 << 20, 3), 7);
            case COMPARE_AND_SWAP, FETCH_AND_ADD -> Operation.atomic(null, type, local, RemoteRegion.of(0x2000, 8, 3), 5, 6);
            default -> throw new IllegalArgumentException(type.name());
        };
    }

    /** An engine-owned 8-byte result word with the operation's hold, as the connection makes one. */
    private EngineBuffer resultWord(long deviceWritten) {
        EngineBuffer b = pool.allocatePooled(8);
        b.buffer().order(ByteOrder.nativeOrder()).putLong(0, deviceWritten); // the HCA writes host order
        assertTrue(b.retain());
        return b;
    }

    private static int holds(EngineBuffer b) {
        return ((EngineBuffer.Root) b).holds();
    }

    @Test
    void atomicsSignalThePreviousValueAndReleaseTheirResultWord() {
        for (OperationType type : EnumSet.of(OperationType.FETCH_AND_ADD, OperationType.COMPARE_AND_SWAP)) {
            EngineBuffer word = resultWord(0x0102_0304_0506_0708L);
            AtomicReference<Operation> op = new AtomicReference<>();
            StepVerifier.create(mono(type, word, true, op).map(Long.class::cast))
                    .then(() -> op.get().succeed())
                    .expectNext(0x0102_0304_0506_0708L)
                    .expectComplete()
                    .verify(WAIT);
            assertTrue(op.get() instanceof AtomicOperation);
            assertTrue(word.isReleased(), "the engine's result word is released");
            assertEquals(0, holds(word));
        }
        assertEquals(0, pool.pooledBytesInUse());
    }

    @Test
    void successOfANonAtomicCompletesEmptyAndOnlyUnholdsTheCallersBuffer() {
        EngineBuffer callers = pool.allocatePooled(100);
        assertTrue(callers.retain());
        AtomicReference<Operation> op = new AtomicReference<>();
        StepVerifier.create(mono(OperationType.WRITE, callers, false, op))
                .then(() -> op.get().succeed())
                .expectComplete()
                .verify(WAIT);
        assertFalse(callers.isReleased(), "the caller still owns it");
        assertEquals(1, holds(callers), "only the operation's hold was dropped");
        assertEquals(128, pool.pooledBytesInUse());
    }

    @Test
    void failureSignalsTheErrorAndDropsTheHolds() {
        EngineBuffer copy = pool.allocatePooled(30);
        assertTrue(copy.retain());
        AtomicReference<Operation> op = new AtomicReference<>();
        IllegalStateException boom = new IllegalStateException("completion failed");
        StepVerifier.create(mono(OperationType.SEND, copy, true, op))
                .then(() -> op.get().fail(boom))
                .expectErrorMatches(e -> e == boom)
                .verify(WAIT);
        assertTrue(copy.isReleased());
        assertEquals(0, pool.pooledBytesInUse(), "an engine-owned copy goes back to the pool");
    }

    @Test
    void holdsAreDroppedExactlyOnce() {
        EngineBuffer callers = pool.allocatePooled(64);
        assertTrue(callers.retain());
        AtomicReference<Operation> op = new AtomicReference<>();
        StepVerifier.create(mono(OperationType.READ, callers, false, op))
                .then(() -> {
                    op.get().releaseHolds(); // e.g. an inline send dropped them at post time
                    op.get().releaseHolds();
                    op.get().succeed(); // and the completion comes later
                })
                .expectComplete()
                .verify(WAIT);
        assertEquals(1, holds(callers), "one hold dropped, not three");
        callers.release();
        assertEquals(0, pool.pooledBytesInUse());
    }

    @Test
    void aCancelledOperationOnlyDropsItsHoldsWhenItCompletes() {
        EngineBuffer word = resultWord(99);
        AtomicReference<Operation> op = new AtomicReference<>();
        StepVerifier.create(mono(OperationType.FETCH_AND_ADD, word, true, op))
                .thenCancel()
                .verify(WAIT);
        Operation cancelled = op.get();
        assertNotNull(cancelled);
        assertTrue(cancelled.cancelled);
        assertEquals(2, holds(word), "cancelling does not free memory the device may still write");
        cancelled.succeed();
        assertEquals(0, holds(word), "the completion the hold waited for frees it");
        assertEquals(0, pool.pooledBytesInUse());

        EngineBuffer copy = pool.allocatePooled(16);
        assertTrue(copy.retain());
        StepVerifier.create(mono(OperationType.SEND, copy, true, op)).thenCancel().verify(WAIT);
        op.get().fail(new IllegalStateException("flushed"));
        assertEquals(0, pool.pooledBytesInUse());
    }

    @Test
    void operationsThatConsumeAPeerReceive() {
        Set<OperationType> consuming = EnumSet.of(OperationType.SEND, OperationType.SEND_WITH_IMMEDIATE,
                OperationType.WRITE_WITH_IMMEDIATE);
        for (OperationType type : OperationType.values()) {
            assertEquals(consuming.contains(type), Operation.consumesPeerReceive(type), type.name());
        }
    }

    /** Reactive Streams rule 1.1: an atomic's value is emitted only once it was requested, whichever came first. */
    @Test
    void anAtomicsValueWaitsForTheSubscribersRequest() {
        EngineBuffer word = resultWord(41);
        AtomicReference<Operation> op = new AtomicReference<>();
        StepVerifier.create(mono(OperationType.FETCH_AND_ADD, word, true, op).map(Long.class::cast), 0)
                .then(() -> op.get().succeed())
                .expectNoEvent(Duration.ofMillis(50))
                .thenRequest(1)
                .expectNext(41L)
                .expectComplete()
                .verify(WAIT);
        assertEquals(0, pool.pooledBytesInUse(), "the result word was released at the completion");
    }

    @Test
    void theNamedFactoriesRefuseAnotherKindOfOperation() {
        EngineBuffer b = pool.allocatePooled(8);
        RemoteRegion region = RemoteRegion.of(0x2000, 8, 3);
        assertThrows(IllegalArgumentException.class, () -> Operation.send(null, OperationType.WRITE, b, false, 8, 0));
        assertThrows(IllegalArgumentException.class, () -> Operation.oneSided(null, OperationType.SEND, b, region, 0));
        assertThrows(IllegalArgumentException.class, () -> Operation.atomic(null, OperationType.READ, b, region, 0, 0));
        b.release();
    }
}
