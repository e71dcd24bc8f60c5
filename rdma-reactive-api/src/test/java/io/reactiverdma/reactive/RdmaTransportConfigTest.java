package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaTransportConfigTest {

    @Test
    void defaults() {
        RdmaTransportConfig c = RdmaTransportConfig.defaults();
        assertNull(c.host());
        assertEquals(RdmaTransportConfig.DEFAULT_PORT, c.port());
        assertEquals(7471, c.port());
        assertTrue(c.options().isEmpty());
        assertFalse(c.metrics());
        assertNull(c.callbackScheduler());
        assertSame(c, RdmaTransportConfig.defaults());
    }

    @Test
    void optionReturnsTheDefaultWhenUnset() {
        RdmaTransportConfig c = RdmaTransportConfig.defaults();
        for (RdmaOption<?> o : RdmaOption.ALL) {
            assertEquals(o.defaultValue(), c.option(o), o.name());
        }
        // Setting one option leaves every other at its default.
        RdmaTransportConfig one = c.withOption(RdmaOption.SEND_QUEUE_DEPTH, 7);
        assertEquals(7, one.option(RdmaOption.SEND_QUEUE_DEPTH));
        for (RdmaOption<?> o : RdmaOption.ALL) {
            if (o != RdmaOption.SEND_QUEUE_DEPTH) {
                assertEquals(o.defaultValue(), one.option(o), o.name());
            }
        }
        assertEquals(Map.of(RdmaOption.SEND_QUEUE_DEPTH, 7), one.options());
        assertThrows(NullPointerException.class, () -> c.option(null));
    }

    @Test
    void withHostReturnsACopy() {
        RdmaTransportConfig original = RdmaTransportConfig.defaults();
        RdmaTransportConfig c = original.withHost("10.0.0.1");
        assertNotSame(original, c);
        assertEquals("10.0.0.1", c.host());
        assertNull(original.host());
        assertEquals("fe80::1", c.withHost("fe80::1").host());
        assertEquals("10.0.0.1", c.host());
    }

    @Test
    void withPortReturnsACopy() {
        RdmaTransportConfig original = RdmaTransportConfig.defaults();
        RdmaTransportConfig c = original.withPort(20000);
        assertNotSame(original, c);
        assertEquals(20000, c.port());
        assertEquals(RdmaTransportConfig.DEFAULT_PORT, original.port());
    }

    @Test
    void withOptionReturnsACopyAndDoesNotShareTheMap() {
        RdmaTransportConfig original = RdmaTransportConfig.defaults();
        RdmaTransportConfig a = original.withOption(RdmaOption.SEND_QUEUE_DEPTH, 256);
        assertNotSame(original, a);
        assertEquals(256, a.option(RdmaOption.SEND_QUEUE_DEPTH));
        assertEquals(128, original.option(RdmaOption.SEND_QUEUE_DEPTH));
        assertTrue(original.options().isEmpty());

        RdmaTransportConfig b = a.withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 8)
                .withOption(RdmaOption.SEND_QUEUE_DEPTH, 16);
        assertEquals(16, b.option(RdmaOption.SEND_QUEUE_DEPTH));
        assertEquals(8, b.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
        // a is unchanged by what was derived from it.
        assertEquals(256, a.option(RdmaOption.SEND_QUEUE_DEPTH));
        assertEquals(64, a.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
        assertEquals(1, a.options().size());
        assertEquals(2, b.options().size());
    }

    @Test
    void withOptionOfEveryType() {
        RdmaTransportConfig c = RdmaTransportConfig.defaults()
                .withOption(RdmaOption.CREDIT_FLOW_CONTROL, false)
                .withOption(RdmaOption.COMPLETION_QUEUE_MODE, CompletionQueueMode.PER_CONNECTION)
                .withOption(RdmaOption.IDLE_STRATEGY, PollerIdleStrategy.busySpin())
                .withOption(RdmaOption.CONNECT_TIMEOUT, Duration.ofMillis(1500));
        assertEquals(false, c.option(RdmaOption.CREDIT_FLOW_CONTROL));
        assertEquals(CompletionQueueMode.PER_CONNECTION, c.option(RdmaOption.COMPLETION_QUEUE_MODE));
        assertEquals(PollerIdleStrategy.busySpin(), c.option(RdmaOption.IDLE_STRATEGY));
        assertEquals(Duration.ofMillis(1500), c.option(RdmaOption.CONNECT_TIMEOUT));
    }

    @Test
    void withOptionValidates() {
        RdmaTransportConfig original = RdmaTransportConfig.defaults().withOption(RdmaOption.RETRY_COUNT, 5);
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> original.withOption(RdmaOption.RETRY_COUNT, 8));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("RETRY_COUNT"), e.getMessage());
        assertEquals(5, original.option(RdmaOption.RETRY_COUNT));
        assertThrows(InvalidRequestException.class,
                () -> original.withOption(RdmaOption.CONNECT_TIMEOUT, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> original.withOption(null, 1));
        assertThrows(NullPointerException.class, () -> original.withOption(RdmaOption.RETRY_COUNT, null));
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void withOptionRefusesAValueOfTheWrongTypeSmuggledPastGenerics() {
        RdmaOption raw = RdmaOption.SEND_QUEUE_DEPTH;
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaTransportConfig.defaults().withOption(raw, "64"));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("SEND_QUEUE_DEPTH"), e.getMessage());
    }

    @Test
    void withMetricsReturnsACopy() {
        RdmaTransportConfig original = RdmaTransportConfig.defaults();
        RdmaTransportConfig c = original.withMetrics(true);
        assertNotSame(original, c);
        assertTrue(c.metrics());
        assertFalse(original.metrics());
        assertFalse(c.withMetrics(false).metrics());
        assertTrue(c.metrics());
    }

    @Test
    void withCallbackSchedulerReturnsACopy() {
        Scheduler s = Schedulers.immediate();
        RdmaTransportConfig original = RdmaTransportConfig.defaults();
        RdmaTransportConfig c = original.withCallbackScheduler(s);
        assertNotSame(original, c);
        assertSame(s, c.callbackScheduler());
        assertNull(original.callbackScheduler());
        RdmaTransportConfig back = c.withCallbackScheduler(null);
        assertNull(back.callbackScheduler());
        assertSame(s, c.callbackScheduler());
    }

    @Test
    void eachWithKeepsEveryOtherField() {
        Scheduler s = Schedulers.immediate();
        RdmaTransportConfig full = RdmaTransportConfig.defaults().withHost("h").withPort(1)
                .withOption(RdmaOption.POLL_BATCH_SIZE, 2).withMetrics(true).withCallbackScheduler(s);
        assertFields(full, "h", 1, 2, true, s);
        assertFields(full.withHost("g"), "g", 1, 2, true, s);
        assertFields(full.withPort(3), "h", 3, 2, true, s);
        assertFields(full.withOption(RdmaOption.POLL_BATCH_SIZE, 4), "h", 1, 4, true, s);
        assertFields(full.withMetrics(false), "h", 1, 2, false, s);
        assertFields(full.withCallbackScheduler(null), "h", 1, 2, true, null);
        // and the one everything was derived from is still as built
        assertFields(full, "h", 1, 2, true, s);
    }

    private static void assertFields(RdmaTransportConfig c, String host, int port, int pollBatch, boolean metrics,
            Scheduler scheduler) {
        assertEquals(host, c.host());
        assertEquals(port, c.port());
        assertEquals(pollBatch, c.option(RdmaOption.POLL_BATCH_SIZE));
        assertEquals(1, c.options().size());
        assertEquals(metrics, c.metrics());
        assertSame(scheduler, c.callbackScheduler());
    }

    @Test
    void optionsIsUnmodifiable() {
        RdmaTransportConfig c = RdmaTransportConfig.defaults().withOption(RdmaOption.SEND_QUEUE_DEPTH, 2);
        Map<RdmaOption<?>, Object> options = c.options();
        assertThrows(UnsupportedOperationException.class, () -> options.put(RdmaOption.RETRY_COUNT, 1));
        assertThrows(UnsupportedOperationException.class, options::clear);
        assertThrows(UnsupportedOperationException.class,
                () -> RdmaTransportConfig.defaults().options().put(RdmaOption.RETRY_COUNT, 1));
        assertEquals(2, c.option(RdmaOption.SEND_QUEUE_DEPTH));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7471, 65535})
    void portInRange(int port) {
        assertEquals(port, RdmaTransportConfig.defaults().withPort(port).port());
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 65536, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void portOutOfRangeIsRefused(int port) {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaTransportConfig.defaults().withPort(port));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains(Integer.toString(port)), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "   ", "\t", "\n"})
    void blankHostIsRefused(String host) {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaTransportConfig.defaults().withHost(host));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("host"), e.getMessage());
    }

    @Test
    void nullHostIsRefused() {
        assertThrows(NullPointerException.class, () -> RdmaTransportConfig.defaults().withHost(null));
    }

    @Test
    void toStringShowsHostPortAndOptions() {
        String s = RdmaTransportConfig.defaults().withHost("10.1.2.3").withPort(9999)
                .withOption(RdmaOption.RETRY_COUNT, 2).toString();
        assertTrue(s.contains("10.1.2.3"), s);
        assertTrue(s.contains("9999"), s);
        assertTrue(s.contains("RETRY_COUNT"), s);
    }
}
