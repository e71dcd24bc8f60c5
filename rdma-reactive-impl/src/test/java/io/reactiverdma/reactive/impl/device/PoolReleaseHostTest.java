package io.reactiverdma.reactive.impl.device;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pool's release settings from system properties: defaults, both forms of the idle time, bad values refused. */
class PoolReleaseHostTest {
    @AfterEach
    void clear() {
        System.clearProperty(PoolRelease.IDLE_TIME_PROPERTY);
        System.clearProperty(PoolRelease.KEEP_IDLE_PROPERTY);
    }

    @Test
    void withoutPropertiesTheDefaultsAre30SecondsAndOneSlabKept() {
        assertEquals(new PoolRelease(Duration.ofSeconds(30), 4 << 20), PoolRelease.fromSystemProperties());
    }

    @Test
    void theIdleTimeIsAnIsoDurationOrMillisecondsAndKeepIsBytes() {
        System.setProperty(PoolRelease.IDLE_TIME_PROPERTY, "PT2M");
        System.setProperty(PoolRelease.KEEP_IDLE_PROPERTY, "0");
        assertEquals(new PoolRelease(Duration.ofMinutes(2), 0), PoolRelease.fromSystemProperties());
        System.setProperty(PoolRelease.IDLE_TIME_PROPERTY, "1500");
        assertEquals(Duration.ofMillis(1500), PoolRelease.fromSystemProperties().idleTime());
    }

    @Test
    void malformedOrNegativeValuesAreRefusedNamingTheProperty() {
        System.setProperty(PoolRelease.IDLE_TIME_PROPERTY, "soon");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, PoolRelease::fromSystemProperties);
        assertTrue(e.getMessage().contains(PoolRelease.IDLE_TIME_PROPERTY), e.getMessage());
        System.setProperty(PoolRelease.IDLE_TIME_PROPERTY, "PT-1S");
        assertThrows(IllegalArgumentException.class, PoolRelease::fromSystemProperties);
        System.clearProperty(PoolRelease.IDLE_TIME_PROPERTY);
        System.setProperty(PoolRelease.KEEP_IDLE_PROPERTY, "-1");
        assertThrows(IllegalArgumentException.class, PoolRelease::fromSystemProperties);
        System.setProperty(PoolRelease.KEEP_IDLE_PROPERTY, "lots");
        assertThrows(IllegalArgumentException.class, PoolRelease::fromSystemProperties);
    }
}
