package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;

import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** metrics(boolean, Supplier) and observer(..) on clients and servers: copies, what they keep and forget. */
class MetricsRecorderAndObserverConfigTest {
    private static final RdmaMetricsRecorder NOTHING = (RdmaMetricsRecorder) java.lang.reflect.Proxy.newProxyInstance(
            RdmaMetricsRecorder.class.getClassLoader(), new Class<?>[] {RdmaMetricsRecorder.class}, (p, m, a) -> null);
    private static final RdmaConnectionObserver OBSERVER = (side, remote, context) -> null;

    @Test
    void aRecorderTurnsMetricsOnInACopyAndMetricsFalseForgetsIt() {
        Supplier<RdmaMetricsRecorder> supplier = () -> NOTHING;
        RdmaClient original = RdmaClient.create();
        RdmaClient on = original.metrics(true, supplier);
        assertNotSame(original, on);
        assertTrue(on.configuration().metrics());
        assertSame(supplier, on.configuration().metricsRecorder());
        assertNull(original.configuration().metricsRecorder());

        RdmaClient off = on.metrics(false);
        assertFalse(off.configuration().metrics());
        assertNull(off.configuration().metricsRecorder(), "off forgets the recorder");
        assertNull(on.metrics(true).configuration().metricsRecorder(), "metrics(true): the global registry again");
        assertNull(on.metrics(false, supplier).configuration().metricsRecorder());
        assertFalse(on.metrics(false, supplier).configuration().metrics());

        RdmaServer server = RdmaServer.create().metrics(true, supplier);
        assertTrue(server.configuration().metrics());
        assertSame(supplier, server.configuration().metricsRecorder());
    }

    @Test
    void aNullRecorderSupplierIsNamed() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> RdmaClient.create().metrics(true, null));
        assertEquals("recorder", e.getMessage());
        assertThrows(NullPointerException.class, () -> RdmaServer.create().metrics(true, null));
    }

    @Test
    void anObserverIsKeptByLaterSettersAndNullRemovesIt() {
        RdmaClient c = RdmaClient.create().observer(OBSERVER).host("h").port(9).metrics(true)
                .option(RdmaOption.RETRY_COUNT, 2);
        assertSame(OBSERVER, c.configuration().observer());
        assertNull(c.observer(null).configuration().observer());
        assertNull(RdmaClient.create().configuration().observer());
        RdmaServer s = RdmaServer.create().observer(OBSERVER).port(0).metrics(true, () -> NOTHING);
        assertSame(OBSERVER, s.configuration().observer());
        assertTrue(s.configuration().metrics());
    }

    @Test
    void outcomesAndSidesHaveLowerCaseTags() {
        assertEquals("success", RdmaMetricsRecorder.Outcome.SUCCESS.tag());
        assertEquals("flushed", RdmaMetricsRecorder.Outcome.FLUSHED.tag());
        assertEquals("server", RdmaConnectionObserver.Side.SERVER.tag());
    }
}
