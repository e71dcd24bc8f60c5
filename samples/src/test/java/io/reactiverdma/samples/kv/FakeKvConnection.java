package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A connection to an in-memory key-value server that answers every request OK, with the engine's send
 * queue made explicit: a send waits in the queue until {@link #postQueued()}, and a send cancelled while
 * queued is removed and never sent (as the engine does, docs/failure-semantics.md). Only what
 * {@link KvClient} uses is implemented (a dynamic proxy: anything else throws).
 */
final class FakeKvConnection {
    private final Sinks.Many<RdmaMessage> inbox = Sinks.many().unicast().onBackpressureBuffer();
    private final List<Queued> queue = new ArrayList<>();
    final AtomicInteger registered = new AtomicInteger();
    final AtomicInteger registrationsReleased = new AtomicInteger();
    final AtomicInteger requestsReceived = new AtomicInteger();
    final RdmaConnection connection;

    private record Queued(ByteBuffer message, MonoSink<Void> sink) {
    }

    FakeKvConnection(KvLayout layout) {
        connection = proxy(RdmaConnection.class, (name, args) -> switch (name) {
            case "receive" -> inbox.asFlux();
            case "send" -> send((ByteBuffer) args[0]);
            case "memory" -> proxy(RdmaMemory.class, (n, a) -> n.equals("allocateRegistered")
                    ? registeredBuffer((Integer) a[0]) : unsupported(n));
            case "maxMessageSize" -> 4096;
            case "remoteAddress" -> new InetSocketAddress("10.0.0.9", 7472);
            case "dispose" -> null;
            default -> unsupported(name);
        });
        inbox.tryEmitNext(message(layout.encode()));
    }

    private Mono<Void> send(ByteBuffer message) {
        return Mono.create(sink -> {
            Queued q = new Queued(message, sink);
            synchronized (queue) {
                queue.add(q);
            }
            sink.onCancel(() -> {
                synchronized (queue) {
                    queue.remove(q);
                }
            });
        });
    }

    /** How many sends wait in the queue (subscribed, not yet posted). */
    int queuedSends() {
        synchronized (queue) {
            return queue.size();
        }
    }

    /** Posts every queued send; the server answers each request OK. */
    void postQueued() {
        List<Queued> posted;
        synchronized (queue) {
            posted = new ArrayList<>(queue);
            queue.clear();
        }
        for (Queued q : posted) {
            q.sink().success();
            KvProtocol.Request r = KvProtocol.decodeRequest(q.message());
            requestsReceived.incrementAndGet();
            inbox.tryEmitNext(message(KvProtocol.encode(new KvProtocol.Response(r.id(), KvProtocol.Status.OK, 0, ""))));
        }
    }

    private RegisteredBuffer registeredBuffer(int size) {
        registered.incrementAndGet();
        ByteBuffer b = ByteBuffer.allocate(size);
        return proxy(RegisteredBuffer.class, (n, a) -> switch (n) {
            case "buffer" -> b;
            case "remoteRegion" -> RemoteRegion.of(0x10000, size, 5);
            case "release" -> {
                registrationsReleased.incrementAndGet();
                yield null;
            }
            default -> unsupported(n);
        });
    }

    private static RdmaMessage message(ByteBuffer data) {
        byte[] bytes = new byte[data.remaining()];
        data.duplicate().get(bytes);
        return proxy(RdmaMessage.class, (n, a) -> switch (n) {
            case "toByteArray" -> bytes.clone();
            case "release" -> null;
            default -> unsupported(n);
        });
    }

    private interface Handler {
        Object call(String method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Handler h) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, m, args) -> switch (m.getName()) {
                    case "toString" -> "fake " + type.getSimpleName();
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == args[0];
                    default -> h.call(m.getName(), args);
                }));
    }

    private static Object unsupported(String method) {
        throw new UnsupportedOperationException("the fake connection does not implement " + method);
    }
}
