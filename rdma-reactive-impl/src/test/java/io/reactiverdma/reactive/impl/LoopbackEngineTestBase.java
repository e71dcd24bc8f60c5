package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import reactor.core.publisher.Sinks;

import java.time.Duration;

/**
 * A fresh loopback stack and one engine on it per test, with the server and the client connection the test
 * makes closed (and the stack closed) after it. The server's side of the connection is handed to
 * {@link #serverConnection} by the test's handler.
 */
abstract class LoopbackEngineTestBase {
    /** How long a close may take in tear-down. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(15);

    LoopbackStack stack;
    RdmaEngine engine;
    DisposableRdmaServer server;
    RdmaConnection client;
    final Sinks.One<RdmaConnection> serverConnection = Sinks.one();

    /** A server or client configuration on the loopback's 127.0.0.1, any free port. */
    static io.reactiverdma.reactive.RdmaTransportConfig localConfig() {
        return io.reactiverdma.reactive.RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
    }

    /** {@link #localConfig()} as a server's, for server-only settings (acceptor, observer). */
    static io.reactiverdma.reactive.RdmaServerConfig serverConfig() {
        return io.reactiverdma.reactive.RdmaServerConfig.of(localConfig());
    }

    /** {@link #localConfig()} as a client's, for client-only settings (private data, observer). */
    static io.reactiverdma.reactive.RdmaClientConfig clientConfig() {
        return io.reactiverdma.reactive.RdmaClientConfig.of(localConfig());
    }

    /** Binds {@link #server} with {@code config}; its handler hands each connection to {@link #serverConnection}. */
    void bindServer(io.reactiverdma.reactive.RdmaTransportConfig config) {
        server = engine.bind(config, conn -> {
            serverConnection.tryEmitValue(conn);
            return conn.onDispose();
        }).block(CLOSE_WAIT);
        org.junit.jupiter.api.Assertions.assertNotNull(server);
    }

    /** The stack each test runs on (a subclass may build another). */
    LoopbackStack newStack() {
        return LoopbackStack.create();
    }

    @BeforeEach
    void startEngine() {
        stack = newStack();
        engine = new RdmaEngine(stack);
    }

    @AfterEach
    void closeEverything() {
        try {
            if (client != null) {
                client.dispose();
                client.onDispose().block(CLOSE_WAIT);
            }
            if (server != null) {
                server.disposeNow(CLOSE_WAIT);
            }
        } catch (RuntimeException e) {
            // a test that left the engine unable to close has failed already for that reason
        } finally {
            stack.close();
        }
    }
}
