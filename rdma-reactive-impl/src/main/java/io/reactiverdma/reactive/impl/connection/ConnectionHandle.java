package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ExposedRegion;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The {@link RdmaConnection} users hold: the API's view of an {@link EngineConnection}, whose Monos and Flux
 * come from an {@link OperationFactory}. A client's handle is what {@code connect()} hands to its subscriber,
 * and only the subscriber holds it. Reactor may drop an emitted value without any hook the engine can see (a downstream
 * {@code timeout} that fired just before the value arrived discards it through {@code onNextDropped}); the
 * engine's own threads reference only the {@link EngineConnection} behind the handle, so a dropped handle
 * becomes unreachable and a {@link Cleaner} closes the connection instead of leaking its queue pair,
 * buffers and poller. Everything the handle gives out (queued and posted operations, the receive
 * subscription, events and onDispose subscriptions) keeps the handle reachable while it is in use.
 */
public final class ConnectionHandle implements RdmaConnection {
    private static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "rdma-connection-cleaner");
        t.setDaemon(true);
        return t;
    });

    private final EngineConnection core;
    private final OperationFactory operations;

    /**
     * @param closeWhenDropped close the connection when this handle becomes unreachable without dispose()
     *                         (a client's: nothing else holds it; a server's connections are the server's)
     */
    public ConnectionHandle(EngineConnection core, boolean closeWhenDropped) {
        this.core = core;
        this.operations = new OperationFactory(core, this, core.memoryPool(), core.config().callbackScheduler());
        if (closeWhenDropped) {
            CLEANER.register(this, () -> dropped(core)); // references the core only, never this handle
        }
    }

    /**
     * A client's handle became unreachable without dispose() (a value Reactor dropped, as a downstream
     * {@code timeout} does with a late connection, or an application that lost it): its connection is closed
     * rather than leak its queue pair, buffers and poller. The cleaner's thread.
     */
    private static void dropped(EngineConnection core) {
        if (!core.isDisposed()) {
            EngineLog.warn(core.description() + " was dropped without dispose() (for example a timeout after "
                    + "connect() discarded it); closing it");
            core.dispose();
        }
    }

    /** The connection behind this handle (for the engine's own tests). */
    EngineConnection core() {
        return core;
    }

    /** A publisher that keeps this handle reachable while subscribed. */
    private <T> Flux<T> held(Flux<T> f) {
        return f.doFinally(s -> Reference.reachabilityFence(this));
    }

    private <T> Mono<T> held(Mono<T> m) {
        return m.doFinally(s -> Reference.reachabilityFence(this));
    }

    @Override
    public Flux<RdmaMessage> receive() {
        return operations.receive(core.receive);
    }

    @Override
    public <T> Flux<T> receive(java.util.function.Function<? super RdmaMessage, ? extends T> decoder) {
        java.util.Objects.requireNonNull(decoder, "decoder");
        return operations.receive(core.receive, decoder);
    }

    @Override
    public Mono<Void> send(ByteBuffer data) {
        return operations.sendCopy(OperationType.SEND, data, 0);
    }

    @Override
    public Mono<Void> send(RegisteredBuffer data) {
        return operations.send(data);
    }

    @Override
    public Mono<Void> send(Publisher<ByteBuffer> messages) {
        return held(operations.send(messages));
    }

    @Override
    public Mono<Void> sendWithImmediate(ByteBuffer data, int immediate) {
        return operations.sendCopy(OperationType.SEND_WITH_IMMEDIATE, data, immediate);
    }

    @Override
    public Mono<Void> write(RegisteredBuffer local, RemoteRegion remote) {
        return operations.oneSided(OperationType.WRITE, local, remote, 0);
    }

    @Override
    public Mono<Void> writeWithImmediate(RegisteredBuffer local, RemoteRegion remote, int immediate) {
        return operations.oneSided(OperationType.WRITE_WITH_IMMEDIATE, local, remote, immediate);
    }

    @Override
    public Mono<Void> read(RegisteredBuffer local, RemoteRegion remote) {
        return operations.oneSided(OperationType.READ, local, remote, 0);
    }

    @Override
    public Mono<Long> compareAndSwap(RemoteRegion remote, long expect, long swap) {
        return operations.atomic(OperationType.COMPARE_AND_SWAP, remote, expect, swap);
    }

    @Override
    public Mono<Long> fetchAndAdd(RemoteRegion remote, long delta) {
        return operations.atomic(OperationType.FETCH_AND_ADD, remote, delta, 0);
    }

    @Override
    public Mono<ExposedRegion> expose(RegisteredBuffer buffer, RemoteAccess... access) {
        return operations.expose(buffer, access);
    }

    @Override
    public Flux<ConnectionEvent> events() {
        return held(core.events());
    }

    @Override
    public byte[] peerPrivateData() {
        return core.agreement().peerPrivateData();
    }

    @Override
    public RdmaMemory memory() {
        return core.memoryPool();
    }

    @Override
    public int maxMessageSize() {
        return core.agreement().maxMessageSize();
    }

    @Override
    public boolean creditFlowControl() {
        return core.agreement().creditFlowControl();
    }

    @Override
    public InetSocketAddress localAddress() {
        return core.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return core.remoteAddress();
    }

    @Override
    public Mono<Void> onDispose() {
        return held(core.onDispose());
    }

    @Override
    public void dispose() {
        core.dispose();
    }

    @Override
    public boolean isDisposed() {
        return core.isDisposed();
    }

    @Override
    public String toString() {
        return core.toString();
    }
}
