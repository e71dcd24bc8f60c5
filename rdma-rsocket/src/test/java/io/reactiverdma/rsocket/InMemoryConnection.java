package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An {@link RdmaConnection} without a device, for counting what the transport itself allocates: its
 * {@code receive()} delivers {@code count} times one message (the same read-only view each time, released
 * by counting), synchronously on the thread that requests, and never completes; its {@code send(Publisher)}
 * takes every buffer at once on the thread that emits it. Neither allocates per message. Other operations
 * are unsupported.
 */
final class InMemoryConnection {
    static final int MAX_MESSAGE_SIZE = 4096;
    private static final InetSocketAddress ADDRESS = InetSocketAddress.createUnresolved("in-memory", 1);

    final AtomicLong released = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    volatile int lastLength;
    private final long count;
    private final ByteBuffer view;
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private final RdmaMessage message = new RdmaMessage() {
        @Override
        public ByteBuffer data() {
            return view;
        }

        @Override
        public int length() {
            return view.remaining();
        }

        @Override
        public boolean hasImmediate() {
            return false;
        }

        @Override
        public int immediate() {
            return 0;
        }

        @Override
        public byte[] toByteArray() {
            byte[] b = new byte[view.remaining()];
            view.get(0, b);
            return b;
        }

        @Override
        public void release() {
            released.incrementAndGet();
        }
    };

    /** Delivers {@code count} copies of {@code message}'s bytes (position to limit). */
    InMemoryConnection(ByteBuffer message, long count) {
        this.view = message.slice().asReadOnlyBuffer();
        this.count = count;
    }

    RdmaConnection connection() {
        return (RdmaConnection) Proxy.newProxyInstance(RdmaConnection.class.getClassLoader(),
                new Class<?>[] {RdmaConnection.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "receive" -> {
                        if (args != null) {
                            throw new UnsupportedOperationException("receive(decoder)");
                        }
                        yield new Messages();
                    }
                    case "send" -> {
                        if (!(args[0] instanceof Publisher<?> p)) {
                            throw new UnsupportedOperationException("send(" + args[0] + ")");
                        }
                        @SuppressWarnings("unchecked")
                        Publisher<ByteBuffer> buffers = (Publisher<ByteBuffer>) p;
                        yield Flux.from(buffers).doOnNext(b -> {
                            lastLength = b.remaining();
                            sent.incrementAndGet();
                        }).then();
                    }
                    case "maxMessageSize" -> MAX_MESSAGE_SIZE;
                    case "onDispose" -> disposed.asMono();
                    case "dispose" -> {
                        disposed.tryEmitEmpty();
                        yield null;
                    }
                    case "isDisposed" -> disposed.scan(reactor.core.Scannable.Attr.TERMINATED);
                    case "localAddress", "remoteAddress" -> ADDRESS;
                    case "toString" -> "InMemoryConnection";
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** The messages, as demand allows, on the requesting thread; never completes. */
    private final class Messages extends Flux<RdmaMessage> {
        @Override
        public void subscribe(CoreSubscriber<? super RdmaMessage> actual) {
            actual.onSubscribe(new Subscription() {
                private long requested;
                private long emitted;
                private boolean emitting;

                @Override
                public void request(long n) {
                    requested = Operators.addCap(requested, n);
                    if (emitting) {
                        return;
                    }
                    emitting = true;
                    while (requested > 0 && emitted < count) {
                        if (requested != Long.MAX_VALUE) {
                            requested--;
                        }
                        emitted++;
                        actual.onNext(message);
                    }
                    emitting = false;
                }

                @Override
                public void cancel() {
                    emitted = count;
                }
            });
        }
    }
}
