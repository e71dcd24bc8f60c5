package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaClientTest {

    @Test
    void createUsesTheDefaults() {
        RdmaClient c = RdmaClient.create();
        assertSame(RdmaClientConfig.defaults(), c.configuration());
        assertNotSame(c, RdmaClient.create());
    }

    @Test
    void hostReturnsANewClient() {
        RdmaClient original = RdmaClient.create();
        RdmaClient c = original.host("10.0.0.1");
        assertNotSame(original, c);
        assertEquals("10.0.0.1", c.configuration().host());
        assertNull(original.configuration().host());
    }

    @Test
    void portReturnsANewClient() {
        RdmaClient original = RdmaClient.create();
        RdmaClient c = original.port(1234);
        assertNotSame(original, c);
        assertEquals(1234, c.configuration().port());
        assertEquals(RdmaTransportConfig.DEFAULT_PORT, original.configuration().port());
    }

    @Test
    void optionReturnsANewClient() {
        RdmaClient original = RdmaClient.create();
        RdmaClient c = original.option(RdmaOption.RECEIVE_BUFFER_SIZE, 65536);
        assertNotSame(original, c);
        assertEquals(65536, c.configuration().option(RdmaOption.RECEIVE_BUFFER_SIZE));
        assertEquals(4096, original.configuration().option(RdmaOption.RECEIVE_BUFFER_SIZE));
        assertTrue(original.configuration().options().isEmpty());
    }

    @Test
    void metricsReturnsANewClient() {
        RdmaClient original = RdmaClient.create();
        RdmaClient c = original.metrics(true);
        assertNotSame(original, c);
        assertTrue(c.configuration().metrics());
        assertFalse(original.configuration().metrics());
    }

    @Test
    void callbackSchedulerReturnsANewClient() {
        Scheduler s = Schedulers.immediate();
        RdmaClient original = RdmaClient.create();
        RdmaClient c = original.callbackScheduler(s);
        assertNotSame(original, c);
        assertSame(s, c.configuration().callbackScheduler());
        assertNull(original.configuration().callbackScheduler());
    }

    @Test
    void settersKeepWhatWasSetBefore() {
        Scheduler s = Schedulers.immediate();
        RdmaClient c = RdmaClient.create().host("h").port(9).option(RdmaOption.RETRY_COUNT, 1).metrics(true)
                .callbackScheduler(s);
        RdmaTransportConfig cfg = c.configuration();
        assertEquals("h", cfg.host());
        assertEquals(9, cfg.port());
        assertEquals(1, cfg.option(RdmaOption.RETRY_COUNT));
        assertTrue(cfg.metrics());
        assertSame(s, cfg.callbackScheduler());
    }

    @Test
    void nullArgumentsAreRefused() {
        RdmaClient c = RdmaClient.create();
        assertThrows(NullPointerException.class, () -> c.host(null));
        assertThrows(NullPointerException.class, () -> c.option(null, 1));
        assertThrows(NullPointerException.class, () -> c.option(RdmaOption.SEND_QUEUE_DEPTH, null));
        assertThrows(NullPointerException.class, () -> c.connectNow(null));
        assertSame(RdmaClientConfig.defaults(), c.configuration());
    }

    @Test
    void invalidValuesAreRefusedWhenSet() {
        RdmaClient c = RdmaClient.create();
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                assertThrows(InvalidRequestException.class, () -> c.port(70000)).reason());
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                assertThrows(InvalidRequestException.class, () -> c.host(" ")).reason());
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> c.option(RdmaOption.SEND_QUEUE_DEPTH, 0));
        assertTrue(e.getMessage().contains("SEND_QUEUE_DEPTH"), e.getMessage());
        assertSame(RdmaClientConfig.defaults(), c.configuration());
    }

    @Test
    void connectWithoutHostErrorsLazily() {
        Mono<RdmaConnection> connect = RdmaClient.create().port(1).connect(); // assembling does not throw
        StepVerifier.create(connect)
                .expectErrorSatisfies(e -> {
                    InvalidRequestException ire = assertInstanceOf(InvalidRequestException.class, e);
                    assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, ire.reason());
                    assertTrue(e.getMessage().contains("host"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
        // each subscription checks again
        StepVerifier.create(connect)
                .expectError(InvalidRequestException.class)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void connectNowWithoutHostThrows() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaClient.create().connectNow(Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains("host"), e.getMessage());
        assertThrows(InvalidRequestException.class, () -> RdmaClient.create().connectNow());
    }

    @Test
    void connectWithoutAnEngineNamesTheImplModule() {
        assertFalse(ServiceLoader.load(RdmaTransportProvider.class).findFirst().isPresent(),
                "precondition: no engine on the api module's test class path");
        StepVerifier.create(RdmaClient.create().host("192.0.2.1").connect())
                .expectErrorSatisfies(e -> {
                    assertSame(RdmaException.class, e.getClass());
                    assertTrue(e.getMessage().contains("rdma-reactive-impl"), e.getMessage());
                })
                .verify(Duration.ofSeconds(5));
        // not cached as a success: a second attempt fails the same way
        StepVerifier.create(RdmaClient.create().host("192.0.2.1").connect())
                .expectErrorMatches(e -> e instanceof RdmaException && e.getMessage().contains("rdma-reactive-impl"))
                .verify(Duration.ofSeconds(5));
    }
}
