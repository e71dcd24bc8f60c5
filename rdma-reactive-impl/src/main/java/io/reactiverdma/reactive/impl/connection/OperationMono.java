package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

import java.nio.ByteBuffer;

/**
 * The {@code Mono<Void>} of one send-queue operation (a send, or an RDMA WRITE or READ): on each
 * subscription the arguments are checked and the buffers held on the subscriber's thread (a typed error
 * before anything is allocated or posted), and the {@link Operation} it makes is the subscriber's
 * {@code Subscription} and signals it directly. Compared with {@code Mono.create(..).then()} this saves the
 * sink, the {@code then()} subscriber, the cancel callback and its disposable for every operation.
 */
final class OperationMono extends Mono<Void> {
    /** What the operation is made from. */
    enum Kind { COPY, REGISTERED, ONE_SIDED }

    private final OperationFactory factory;
    private final Kind kind;
    private final OperationType type;
    private final ByteBuffer data;
    private final RegisteredBuffer buffer;
    private final RemoteRegion remote;
    private final int immediate;

    /** A new one, through Reactor's assembly hooks like Reactor's own operators. */
    static Mono<Void> of(OperationFactory factory, Kind kind, OperationType type, ByteBuffer data,
            RegisteredBuffer buffer, RemoteRegion remote, int immediate) {
        return onAssembly(new OperationMono(factory, kind, type, data, buffer, remote, immediate));
    }

    private OperationMono(OperationFactory factory, Kind kind, OperationType type, ByteBuffer data, RegisteredBuffer buffer,
            RemoteRegion remote, int immediate) {
        this.factory = factory;
        this.kind = kind;
        this.type = type;
        this.data = data;
        this.buffer = buffer;
        this.remote = remote;
        this.immediate = immediate;
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        Operation op;
        try {
            op = switch (kind) {
                case COPY -> factory.copyOperation(type, data, immediate);
                case REGISTERED -> factory.sendOperation(buffer);
                case ONE_SIDED -> factory.oneSidedOperation(type, buffer, remote, immediate);
            };
        } catch (Throwable e) {
            Operators.error(actual, Operators.onOperatorError(e, actual.currentContext()));
            return;
        }
        op.subscriber(actual);
        actual.onSubscribe(op);
        factory.submit(op);
    }
}
