package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ServiceLoader;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaServerTest {
    private static final Function<RdmaConnection, Publisher<Void>> HANDLER = conn -> Mono.empty();

    @Test
    void createUsesTheDefaults() {
        RdmaServer s = RdmaServer.create();
        assertSame(RdmaServerConfig.defaults(), s.configuration());
        assertNotSame(s, RdmaServer.create());
    }

    @Test
    void hostReturnsANewServer() {
        RdmaServer original = RdmaServer.create();
        RdmaServer s = original.host("10.0.0.1");
        assertNotSame(original, s);
        assertEquals("10.0.0.1", s.configuration().host());
        assertNull(original.configuration().host());
    }

    @Test
    void portReturnsANewServer() {
        RdmaServer original = RdmaServer.create();
        RdmaServer s = original.port(0);
        assertNotSame(original, s);
        assertEquals(0, s.configuration().port());
        assertEquals(RdmaTransportConfig.DEFAULT_PORT, original.configuration().port());
    }

    @Test
    void optionReturnsANewServer() {
        RdmaServer original = RdmaServer.create();
        RdmaServer s = original.option(RdmaOption.COMPLETION_QUEUE_MODE, CompletionQueueMode.PER_CONNECTION);
        assertNotSame(original, s);
        assertEquals(CompletionQueueMode.PER_CONNECTION, s.configuration().option(RdmaOption.COMPLETION_QUEUE_MODE));
        assertEquals(CompletionQueueMode.SHARED, original.configuration().option(RdmaOption.COMPLETION_QUEUE_MODE));
        assertTrue(original.configuration().options().isEmpty());
    }

    @Test
    void metricsReturnsANewServer() {
        RdmaServer original = RdmaServer.create();
        RdmaServer s = original.metrics(true);
        assertNotSame(original, s);
        assertTrue(s.configuration().metrics());
        assertFalse(original.configuration().metrics());
    }

    @Test
    void callbackSchedulerReturnsANewServer() {
        Scheduler sch = Schedulers.immediate();
        RdmaServer original = RdmaServer.create();
        RdmaServer s = original.callbackScheduler(sch);
        assertNotSame(original, s);
        assertSame(sch, s.configuration().callbackScheduler());
        assertNull(original.configuration().callbackScheduler());
    }

    @Test
    void handleReturnsANewServerWithTheSameConfiguration() {
        RdmaServer original = RdmaServer.create().host("h").port(5);
        RdmaServer s = original.handle(HANDLER);
        assertNotSame(original, s);
        assertSame(original.configuration(), s.configuration());
        // the original still has no handler
        StepVerifier.create(original.bind())
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("handler"), e.getMessage()))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void nullArgumentsAreRefused() {
        RdmaServer s = RdmaServer.create();
        assertThrows(NullPointerException.class, () -> s.host(null));
        assertThrows(NullPointerException.class, () -> s.option(null, 1));
        assertThrows(NullPointerException.class, () -> s.option(RdmaOption.SEND_QUEUE_DEPTH, null));
        assertThrows(NullPointerException.class, () -> s.handle(null));
        assertThrows(NullPointerException.class, () -> s.bindNow(null));
        assertSame(RdmaServerConfig.defaults(), s.configuration());
    }

    @Test
    void invalidValuesAreRefusedWhenSet() {
        RdmaServer s = RdmaServer.create();
        assertThrows(InvalidRequestException.class, () -> s.port(-1));
        assertThrows(InvalidRequestException.class, () -> s.host(""));
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> s.option(RdmaOption.RNR_RETRY_COUNT, 7));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("RNR_RETRY_COUNT"), e.getMessage());
    }

    @Test
    void bindWithoutHostErrors() {
        Mono<DisposableRdmaServer> bind = RdmaServer.create().handle(HANDLER).bind(); // assembling does not throw
        StepVerifier.create(bind)
                .expectErrorSatisfies(e -> {
                    InvalidRequestException ire = assertInstanceOf(InvalidRequestException.class, e);
                    assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, ire.reason());
                    assertTrue(e.getMessage().contains("host"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void bindWithoutHandlerErrors() {
        StepVerifier.create(RdmaServer.create().host("10.0.0.1").bind())
                .expectErrorSatisfies(e -> {
                    InvalidRequestException ire = assertInstanceOf(InvalidRequestException.class, e);
                    assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, ire.reason());
                    assertTrue(e.getMessage().contains("handler"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void bindWithNeitherHostNorHandlerErrors() {
        StepVerifier.create(RdmaServer.create().bind())
                .expectError(InvalidRequestException.class)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void bindNowWithoutHandlerThrows() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaServer.create().host("10.0.0.1").bindNow(Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains("handler"), e.getMessage());
        assertThrows(InvalidRequestException.class, () -> RdmaServer.create().bindNow());
    }

    @Test
    void bindWithoutAnEngineNamesTheImplModule() {
        assertFalse(ServiceLoader.load(RdmaTransportProvider.class).findFirst().isPresent(),
                "precondition: no engine on the api module's test class path");
        StepVerifier.create(RdmaServer.create().host("192.0.2.1").handle(HANDLER).bind())
                .expectErrorSatisfies(e -> {
                    assertSame(RdmaException.class, e.getClass());
                    assertTrue(e.getMessage().contains("rdma-reactive-impl"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void everySetterKeepsTheHandler() {
        // Reaching the engine lookup (instead of "no handler") proves the handler survived every copy.
        RdmaServer s = RdmaServer.create().handle(HANDLER).host("192.0.2.1").port(0)
                .option(RdmaOption.POLL_BATCH_SIZE, 8).metrics(true).callbackScheduler(Schedulers.immediate());
        StepVerifier.create(s.bind())
                .expectErrorSatisfies(e -> {
                    assertFalse(e instanceof InvalidRequestException, e.toString());
                    assertTrue(e.getMessage().contains("rdma-reactive-impl"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
        RdmaTransportConfig cfg = s.configuration();
        assertEquals("192.0.2.1", cfg.host());
        assertEquals(0, cfg.port());
        assertEquals(8, cfg.option(RdmaOption.POLL_BATCH_SIZE));
        assertTrue(cfg.metrics());
        assertSame(Schedulers.immediate(), cfg.callbackScheduler());
    }
}
