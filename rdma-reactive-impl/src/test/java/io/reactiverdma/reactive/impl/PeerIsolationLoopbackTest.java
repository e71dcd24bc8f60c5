package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.test.StepVerifier;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PeerIsolationContract} on the loopback device, which checks a type 2 window's rkey against the QP
 * it is bound to as rxe does. Loopback only: the tests below need a device without memory windows (a
 * loopback build option) or count memory windows (loopback resource accounting).
 */
@Timeout(60)
class PeerIsolationLoopbackTest extends PeerIsolationContract {
    private final LoopbackStackFixture fixture = new LoopbackStackFixture(Duration.ofSeconds(10),
            Kind.PROTECTION_DOMAIN, Kind.REGISTRATION, Kind.CM_CHANNEL, Kind.CM_ID);
    private final LoopbackStack stack = fixture.stack();

    @Override
    protected StackFixture stack() {
        return fixture;
    }

    @Override
    protected int messages() {
        return 50;
    }

    /**
     * A device without type 2 windows: credit words fall back to a registration each (credits still work, the
     * words are not isolated: documented), and expose is refused as NOT_SUPPORTED.
     */
    @Test
    void withoutMemoryWindowsCreditsStillWorkAndExposeIsNotSupported() {
        LoopbackStack plain = LoopbackStack.builder().device("loopback0", "127.0.0.1").memoryWindows(false).build();
        PeerIsolationScenario s = new PeerIsolationScenario(new RdmaEngine(plain), "127.0.0.1", Duration.ofSeconds(10));
        try {
            s.startServer();
            RdmaConnection c = s.connect();
            assertTrue(c.creditFlowControl());
            s.exchange(c, "plain device", 50).block(Duration.ofSeconds(10));
            RegisteredBuffer b = c.memory().allocate(64);
            StepVerifier.create(c.expose(b, RemoteAccess.WRITE))
                    .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.NOT_SUPPORTED,
                            ((InvalidRequestException) e).reason()))
                    .verify(Duration.ofSeconds(10));
            b.release();
            assertEquals(0, plain.resources().count(Kind.MEMORY_WINDOW));
        } finally {
            s.close();
            plain.close();
        }
    }

    @Test
    void exposeRefusesBadInputBeforeAnythingIsPosted() {
        PeerIsolationScenario scenario = scenario();
        scenario.startServer();
        RdmaConnection c = scenario.connect();
        RegisteredBuffer b = c.memory().allocate(64);
        long windows = stack.resources().count(Kind.MEMORY_WINDOW); // the credit words' windows
        StepVerifier.create(c.expose(b))
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        ((InvalidRequestException) e).reason()))
                .verify(Duration.ofSeconds(10));
        b.release();
        StepVerifier.create(c.expose(b, RemoteAccess.READ))
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.BUFFER_RELEASED,
                        ((InvalidRequestException) e).reason()))
                .verify(Duration.ofSeconds(10));
        assertThrows(NullPointerException.class, () -> c.expose(null, RemoteAccess.READ));
        assertEquals(windows, stack.resources().count(Kind.MEMORY_WINDOW), "no window left behind");
    }
}
