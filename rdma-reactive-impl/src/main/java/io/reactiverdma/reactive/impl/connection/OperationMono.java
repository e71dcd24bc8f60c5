package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.ExposedRegion;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

import java.nio.ByteBuffer;

/**
 * The {@code Mono} of one send-queue operation (every kind: sends, RDMA WRITE and READ, atomics, binds): on
 * each subscription the arguments are checked and the buffers held on the subscriber's thread (a typed error
 * before anything is allocated or posted), and the {@link Operation} it makes is the subscriber's
 * {@code Subscription} and signals it directly. Compared with {@code Mono.create(..)} this saves the sink,
 * the cancel callback and its disposable for every operation. One small subclass per kind holds only that
 * kind's arguments.
 */
abstract class OperationMono<T> extends Mono<T> {
    final OperationFactory factory;

    OperationMono(OperationFactory factory) {
        this.factory = factory;
    }

    /** {@code send(ByteBuffer)} and its variants: the bytes are copied at subscription. */
    static Mono<Void> copy(OperationFactory factory, OperationType type, ByteBuffer data, int immediate) {
        return onAssembly(new OperationMono<Void>(factory) {
            @Override
            Operation make() {
                return factory.copyOperation(type, data, immediate);
            }
        });
    }

    /** {@code send(RegisteredBuffer)}. */
    static Mono<Void> registered(OperationFactory factory, RegisteredBuffer buffer) {
        return onAssembly(new OperationMono<Void>(factory) {
            @Override
            Operation make() {
                return factory.sendOperation(buffer);
            }
        });
    }

    /** RDMA WRITE (with or without immediate) and READ. */
    static Mono<Void> oneSided(OperationFactory factory, OperationType type, RegisteredBuffer local,
            RemoteRegion remote, int immediate) {
        return onAssembly(new OperationMono<Void>(factory) {
            @Override
            Operation make() {
                return factory.oneSidedOperation(type, local, remote, immediate);
            }
        });
    }

    /** COMPARE_AND_SWAP and FETCH_AND_ADD: emits the remote word's previous value. */
    static Mono<Long> atomic(OperationFactory factory, OperationType type, RemoteRegion remote, long compareAdd,
            long swap) {
        return onAssembly(new OperationMono<Long>(factory) {
            @Override
            Operation make() {
                return factory.atomicOperation(type, remote, compareAdd, swap);
            }
        });
    }

    /** {@code expose}: emits the region once its window is bound. */
    static Mono<ExposedRegion> expose(OperationFactory factory, RegisteredBuffer buffer, RemoteAccess[] access) {
        return onAssembly(new OperationMono<ExposedRegion>(factory) {
            @Override
            Operation make() {
                return factory.bindOperation(buffer, access);
            }
        });
    }

    /** Subscriber's thread: checks the arguments, holds the buffers, makes the operation (or throws, typed). */
    abstract Operation make();

    @Override
    public final void subscribe(CoreSubscriber<? super T> actual) {
        Operation op;
        try {
            op = make();
        } catch (Throwable e) {
            Operators.error(actual, Operators.onOperatorError(e, actual.currentContext()));
            return;
        }
        op.subscribe(actual);
        factory.submit(op);
    }
}
