package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Concurrent chunk READs that both see the value change fail together, and Reactor hands them over as one
 * composite: it must still count as "changed" (GET retries, download maps it to CONCURRENT_MODIFICATION).
 * Seen on rxe: a download failed with a bare CompositeException.
 */
class KvClientChangedTest {
    @Test
    void oneOrSeveralValueChangedCountAsChangedAndAnythingMixedInDoesNot() {
        assertTrue(KvClient.changed(new KvClient.ValueChanged()));
        assertTrue(KvClient.changed(Exceptions.multiple(new KvClient.ValueChanged(), new KvClient.ValueChanged())));
        assertFalse(KvClient.changed(Exceptions.multiple(new KvClient.ValueChanged(), new IllegalStateException("closed"))));
        assertFalse(KvClient.changed(new IllegalStateException("closed")));
    }
}
