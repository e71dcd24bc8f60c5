package io.reactiverdma.reactive.docs;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RemoteRegion;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the examples of the docs that need no RDMA device ({@link DocExamples}), and checks the messages the
 * docs quote for failures that happen before any device is touched. This module's tests have no engine on
 * the class path, which is itself a case the docs describe.
 */
class DocExamplesTest {

    @Test
    void configuredClientHasWhatTheGuideSays() {
        RdmaTransportConfig c = DocExamples.configuredClient().configuration();
        assertEquals("10.0.0.1", c.host());
        assertEquals(7471, c.port());
        assertEquals(64 * 1024, c.option(RdmaOption.RECEIVE_BUFFER_SIZE));
        assertEquals(32, c.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
        assertEquals(Duration.ofSeconds(3), c.option(RdmaOption.CONNECT_TIMEOUT));
        assertEquals(PollerIdleStrategy.backoff(10, 5, 1_000, 1_000_000), c.option(RdmaOption.IDLE_STRATEGY));
        assertEquals(128, c.option(RdmaOption.SEND_QUEUE_DEPTH), "an option not set keeps its default");
        assertEquals(4, c.options().size(), "host and port are not options");
        assertTrue(c.metrics());
        assertNotNull(c.callbackScheduler());
    }

    @Test
    void regionTravelsInTwentyBytesAndSlicesKeepTheKey() {
        RemoteRegion lent = RemoteRegion.of(0x7f00_0000_1000L, 8192, 0x1234);
        RemoteRegion sliced = DocExamples.regionRoundTrip(lent);
        assertEquals(RemoteRegion.of(0x7f00_0000_1000L + 4096, 8, 0x1234), sliced);
        assertEquals(RemoteRegion.ENCODED_SIZE, lent.toBytes().length);
        assertEquals(lent, RemoteRegion.fromBytes(lent.toBytes()));
    }

    /** Messages quoted in docs/programming-guide.md and docs/troubleshooting.md. */
    @Test
    void quotedValidationMessages() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaClient.create().option(RdmaOption.RNR_RETRY_COUNT, 7));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertEquals("option RNR_RETRY_COUNT must be 0..6, got 7", e.getMessage());

        e = assertThrows(InvalidRequestException.class, () -> RemoteRegion.of(0, 16, 1).slice(8, 16));
        assertEquals(InvalidRequestException.Reason.OUTSIDE_REGION, e.reason());

        StepVerifier.create(RdmaClient.create().connect())
                .expectErrorSatisfies(x -> assertEquals("no host: call host(..) before connect()", x.getMessage()))
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(RdmaServer.create().host("10.0.0.1").bind())
                .expectErrorSatisfies(x -> assertEquals("no handler: call handle(..) before bind()", x.getMessage()))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void withoutTheEngineBindAndConnectSayWhatToAdd() {
        StepVerifier.create(RdmaServer.create().host("10.0.0.1").handle(conn -> Mono.empty()).bind())
                .expectErrorSatisfies(x -> {
                    assertEquals(RdmaException.class, x.getClass());
                    assertEquals("no RDMA engine on the class path: add the rdma-reactive-impl module "
                            + "(io.reactiverdma:rdma-reactive-impl) as a runtime dependency", x.getMessage());
                })
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(RdmaClient.create().host("10.0.0.1").connect())
                .expectError(RdmaException.class)
                .verify(Duration.ofSeconds(5));
    }
}
