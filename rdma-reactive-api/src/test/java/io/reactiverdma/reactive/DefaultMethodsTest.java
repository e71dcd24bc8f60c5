package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The default methods of the API interfaces, on minimal stubs. */
class DefaultMethodsTest {

    /** A server stub whose onDispose completes when {@code disposeCompletes} and dispose() was called. */
    private static final class StubServer implements DisposableRdmaServer {
        final AtomicInteger disposed = new AtomicInteger();
        final Sinks.Empty<Void> done = Sinks.empty();
        final boolean disposeCompletes;

        StubServer(boolean disposeCompletes) {
            this.disposeCompletes = disposeCompletes;
        }

        @Override
        public InetSocketAddress address() {
            return InetSocketAddress.createUnresolved("10.0.0.1", 40000);
        }

        @Override
        public Flux<ConnectionEvent> connectionEvents() {
            return Flux.empty();
        }

        @Override
        public Mono<Void> disposeGracefully(java.time.Duration timeout) {
            return Mono.fromRunnable(this::dispose).then(onDispose());
        }

        @Override
        public int connectionCount() {
            return 0;
        }

        @Override
        public Mono<Void> onDispose() {
            return done.asMono();
        }

        @Override
        public void dispose() {
            disposed.incrementAndGet();
            if (disposeCompletes) {
                done.tryEmitEmpty();
            }
        }
    }

    @Test
    void serverHostAndPortComeFromAddress() {
        StubServer s = new StubServer(true);
        assertEquals("10.0.0.1", s.host());
        assertEquals(40000, s.port());
    }

    @Test
    void disposeNowDisposesAndWaits() {
        StubServer s = new StubServer(true);
        s.disposeNow(Duration.ofSeconds(5));
        assertEquals(1, s.disposed.get());
        StubServer t = new StubServer(true);
        t.disposeNow();
        assertEquals(1, t.disposed.get());
    }

    @Test
    void disposeNowTimesOutWithIllegalStateException() {
        StubServer s = new StubServer(false);
        assertThrows(IllegalStateException.class, () -> s.disposeNow(Duration.ofMillis(50)));
        assertEquals(1, s.disposed.get());
    }

    @Test
    void messageCloseReleases() {
        AtomicInteger released = new AtomicInteger();
        RdmaMessage m = new RdmaMessage() {
            @Override
            public ByteBuffer data() {
                return ByteBuffer.allocate(0).asReadOnlyBuffer();
            }

            @Override
            public int length() {
                return 0;
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
                return new byte[0];
            }

            @Override
            public void release() {
                released.incrementAndGet();
            }
        };
        try (RdmaMessage msg = m) {
            assertTrue(msg.data().isReadOnly());
        }
        assertEquals(1, released.get());
    }
}
