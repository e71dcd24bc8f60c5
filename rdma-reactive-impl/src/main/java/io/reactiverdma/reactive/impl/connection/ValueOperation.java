package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import reactor.core.publisher.Operators;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An operation whose {@code Mono} emits a value (an atomic's previous value, a bind's region): the value is
 * emitted once the subscriber has requested it (Reactive Streams rule 1.1), whichever of the request (any
 * thread) and the completion (poller thread) comes last, exactly once; a cancel before that drops it.
 */
abstract class ValueOperation extends Operation {
    private static final VarHandle STATE;
    private static final int REQUESTED = 1;
    private static final int HAS_VALUE = 2;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(ValueOperation.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #REQUESTED} and {@link #HAS_VALUE}: the one of the two that sets the second one emits. */
    @SuppressWarnings("unused")
    private volatile int state;
    /** Written before {@link #HAS_VALUE} is set, read after it was seen. */
    private Object value;

    ValueOperation(SendQueue queue, OperationType type, EngineBuffer local, boolean ownsLocal, int length) {
        super(queue, type, local, ownsLocal, length);
    }

    @Override
    public final void request(long n) {
        if (!Operators.validate(n)) {
            return;
        }
        int s = (int) STATE.getAndBitwiseOr(this, REQUESTED);
        if (s == HAS_VALUE) {
            emit();
        }
    }

    @Override
    final void complete(Object v) {
        if (v == null) {
            subscriber.onComplete();
            return;
        }
        value = v;
        int s = (int) STATE.getAndBitwiseOr(this, HAS_VALUE);
        if (s == REQUESTED) {
            emit();
        }
    }

    private void emit() {
        Object v = value;
        value = null;
        if (!cancelled) {
            subscriber.onNext(v);
            subscriber.onComplete();
        }
    }
}
