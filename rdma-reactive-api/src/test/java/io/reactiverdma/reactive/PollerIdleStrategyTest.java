package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PollerIdleStrategyTest {

    @Test
    void busySpin() {
        PollerIdleStrategy s = PollerIdleStrategy.busySpin();
        assertEquals(PollerIdleStrategy.Kind.BUSY_SPIN, s.kind());
        assertSame(s, PollerIdleStrategy.busySpin());
        assertEquals("busy_spin", s.toString());
    }

    @Test
    void eventDriven() {
        PollerIdleStrategy s = PollerIdleStrategy.eventDriven();
        assertEquals(PollerIdleStrategy.Kind.EVENT_DRIVEN, s.kind());
        assertSame(s, PollerIdleStrategy.eventDriven());
        assertEquals(PollerIdleStrategy.DEFAULT_SPIN_POLLS, s.maxSpins());
        assertSame(s, PollerIdleStrategy.eventDriven(PollerIdleStrategy.DEFAULT_SPIN_POLLS));
        assertEquals("event_driven(" + PollerIdleStrategy.DEFAULT_SPIN_POLLS + " spin polls)", s.toString());
    }

    @Test
    void eventDrivenKeepsItsSpin() {
        PollerIdleStrategy s = PollerIdleStrategy.eventDriven(0);
        assertEquals(PollerIdleStrategy.Kind.EVENT_DRIVEN, s.kind());
        assertEquals(0, s.maxSpins());
        assertEquals(0, s.maxYields());
        assertEquals("event_driven(0 spin polls)", s.toString());
        assertEquals(PollerIdleStrategy.eventDriven(1_000), PollerIdleStrategy.eventDriven(1_000));
        assertNotEquals(PollerIdleStrategy.eventDriven(0), PollerIdleStrategy.eventDriven(1));
    }

    @Test
    void eventDrivenRefusesANegativeSpinNamingIt() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> PollerIdleStrategy.eventDriven(-1));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("spinPolls must be >= 0, got -1"), e.getMessage());
    }

    @Test
    void backoffDefaultsAreAgronas() {
        PollerIdleStrategy s = PollerIdleStrategy.backoff();
        assertEquals(PollerIdleStrategy.Kind.BACKOFF, s.kind());
        assertEquals(10, s.maxSpins());
        assertEquals(5, s.maxYields());
        assertEquals(1_000, s.minParkPeriodNs());
        assertEquals(1_000_000, s.maxParkPeriodNs());
        assertEquals(PollerIdleStrategy.backoff(10, 5, 1_000, 1_000_000), s);
    }

    @Test
    void backoffKeepsItsArguments() {
        PollerIdleStrategy s = PollerIdleStrategy.backoff(3, 4, 50, 7_000);
        assertEquals(PollerIdleStrategy.Kind.BACKOFF, s.kind());
        assertEquals(3, s.maxSpins());
        assertEquals(4, s.maxYields());
        assertEquals(50, s.minParkPeriodNs());
        assertEquals(7_000, s.maxParkPeriodNs());
        String text = s.toString();
        assertTrue(text.startsWith("backoff("), text);
        assertTrue(text.contains("3 spins") && text.contains("4 yields") && text.contains("50..7000"), text);
    }

    @Test
    void backoffBoundaries() {
        PollerIdleStrategy s = PollerIdleStrategy.backoff(0, 0, 1, 1);
        assertEquals(0, s.maxSpins());
        assertEquals(0, s.maxYields());
        assertEquals(1, s.minParkPeriodNs());
        assertEquals(1, s.maxParkPeriodNs());
        assertEquals(Long.MAX_VALUE, PollerIdleStrategy.backoff(Long.MAX_VALUE, Long.MAX_VALUE, 1, Long.MAX_VALUE)
                .maxParkPeriodNs());
    }

    @ParameterizedTest
    @CsvSource({
            "-1, 0, 1, 1",
            "0, -1, 1, 1",
            "-9223372036854775808, 5, 1000, 1000000",
            "0, 0, 0, 1",
            "0, 0, 0, 0",
            "0, 0, -5, 10",
            "0, 0, 2, 1",
            "10, 5, 1000000, 1000"})
    void backoffRefusesInvalidArguments(long spins, long yields, long minPark, long maxPark) {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> PollerIdleStrategy.backoff(spins, yields, minPark, maxPark));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
    }

    @Test
    void equalsAndHashCode() {
        PollerIdleStrategy a = PollerIdleStrategy.backoff(1, 2, 3, 4);
        PollerIdleStrategy b = PollerIdleStrategy.backoff(1, 2, 3, 4);
        assertEquals(a, a);
        assertEquals(a, b);
        assertEquals(b, a);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, PollerIdleStrategy.backoff(9, 2, 3, 4));
        assertNotEquals(a, PollerIdleStrategy.backoff(1, 9, 3, 4));
        assertNotEquals(a, PollerIdleStrategy.backoff(1, 2, 2, 4));
        assertNotEquals(a, PollerIdleStrategy.backoff(1, 2, 3, 9));
        assertNotEquals(PollerIdleStrategy.busySpin(), PollerIdleStrategy.eventDriven());
        assertNotEquals(PollerIdleStrategy.backoff(), PollerIdleStrategy.busySpin());
        assertNotEquals(PollerIdleStrategy.backoff(), PollerIdleStrategy.eventDriven());
        assertNotEquals(a, null);
        assertNotEquals(a, (Object) PollerIdleStrategy.Kind.BACKOFF);
        assertEquals(PollerIdleStrategy.busySpin(), PollerIdleStrategy.busySpin());
    }
}
