package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaOptionTest {

    static Stream<RdmaOption<?>> allOptions() {
        return RdmaOption.ALL.stream();
    }

    /** Every int option with its documented default, minimum and maximum. */
    static Stream<Arguments> intOptions() {
        return Stream.of(
                Arguments.of(RdmaOption.SEND_QUEUE_DEPTH, 128, 1, 16384),
                Arguments.of(RdmaOption.RECEIVE_QUEUE_DEPTH, 64, 1, 16384),
                Arguments.of(RdmaOption.RECEIVE_BUFFER_SIZE, 4096, 8, 4 * 1024 * 1024),
                Arguments.of(RdmaOption.MAX_INLINE_DATA, 64, 0, 256),
                Arguments.of(RdmaOption.POLL_BATCH_SIZE, 32, 1, 1024),
                Arguments.of(RdmaOption.READ_ATOMIC_DEPTH, 4, 1, 255),
                Arguments.of(RdmaOption.RNR_RETRY_COUNT, 3, 0, 6),
                Arguments.of(RdmaOption.RETRY_COUNT, 6, 0, 7),
                Arguments.of(RdmaOption.SIGNAL_INTERVAL, 16, 1, 16384),
                Arguments.of(RdmaOption.ACK_TIMEOUT, 0, 0, 31),
                Arguments.of(RdmaOption.TYPE_OF_SERVICE, -1, -1, 255),
                Arguments.of(RdmaOption.COMPLETION_VECTOR, 0, 0, 1023),
                Arguments.of(RdmaOption.MAX_CONNECTIONS, Integer.MAX_VALUE, 1, Integer.MAX_VALUE),
                Arguments.of(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 0, 0, 1 << 20));
    }

    @Test
    void allListsEveryPublicOptionOnceWithDistinctNames() {
        // Every public RdmaOption constant, found by reflection, so a new option cannot be left out of ALL.
        long constants = java.util.Arrays.stream(RdmaOption.class.getFields())
                .filter(f -> java.lang.reflect.Modifier.isStatic(f.getModifiers()) && f.getType() == RdmaOption.class)
                .count();
        assertEquals(constants, RdmaOption.ALL.size());
        assertEquals(constants, new HashSet<>(RdmaOption.ALL).size());
        Set<String> names = new HashSet<>();
        for (RdmaOption<?> o : RdmaOption.ALL) {
            assertTrue(names.add(o.name()), "duplicate name " + o.name());
        }
        for (RdmaOption<?> o : List.of(RdmaOption.SEND_QUEUE_DEPTH, RdmaOption.RECEIVE_QUEUE_DEPTH,
                RdmaOption.RECEIVE_BUFFER_SIZE, RdmaOption.MAX_INLINE_DATA, RdmaOption.POLL_BATCH_SIZE,
                RdmaOption.CREDIT_FLOW_CONTROL, RdmaOption.COMPLETION_QUEUE_MODE, RdmaOption.IDLE_STRATEGY,
                RdmaOption.CONNECT_TIMEOUT, RdmaOption.READ_ATOMIC_DEPTH, RdmaOption.RNR_RETRY_COUNT,
                RdmaOption.RETRY_COUNT, RdmaOption.SIGNAL_INTERVAL, RdmaOption.ACK_TIMEOUT,
                RdmaOption.TYPE_OF_SERVICE, RdmaOption.LOCAL_ADDRESS, RdmaOption.COMPLETION_VECTOR,
                RdmaOption.MAX_CONNECTIONS, RdmaOption.ACCEPT_TIMEOUT)) {
            assertTrue(RdmaOption.ALL.contains(o), o + " missing from ALL");
        }
        assertThrows(UnsupportedOperationException.class, () -> RdmaOption.ALL.remove(0));
    }

    @ParameterizedTest
    @MethodSource("allOptions")
    void defaultIsValid(RdmaOption<?> option) {
        Object def = option.defaultValue();
        assertNotNull(def, option.name());
        assertTrue(option.type().isInstance(def), option.name());
        assertSame(def, option.validate(def));
        assertEquals(option.name(), option.toString());
    }

    @Test
    void documentedDefaults() {
        assertEquals(Boolean.TRUE, RdmaOption.CREDIT_FLOW_CONTROL.defaultValue());
        assertEquals(CompletionQueueMode.SHARED, RdmaOption.COMPLETION_QUEUE_MODE.defaultValue());
        assertEquals(PollerIdleStrategy.eventDriven(), RdmaOption.IDLE_STRATEGY.defaultValue());
        assertEquals(Duration.ofSeconds(10), RdmaOption.CONNECT_TIMEOUT.defaultValue());
        assertEquals(Integer.class, RdmaOption.SEND_QUEUE_DEPTH.type());
        assertEquals(Duration.class, RdmaOption.CONNECT_TIMEOUT.type());
        assertEquals("SEND_QUEUE_DEPTH", RdmaOption.SEND_QUEUE_DEPTH.name());
    }

    @ParameterizedTest
    @MethodSource("intOptions")
    void intOptionRange(RdmaOption<Integer> option, int def, int min, int max) {
        assertEquals(def, option.defaultValue());
        assertEquals(min, option.validate(min));
        assertEquals(max, option.validate(max));
        assertEquals(def, option.validate(def));

        for (int bad : new int[] {min - 1, max + 1, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            if (bad >= min && bad <= max) {
                continue; // MAX_CONNECTIONS: 2^31-1 is its maximum, and max + 1 wraps to a bad value anyway
            }
            InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> option.validate(bad),
                    option + " " + bad);
            assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
            assertTrue(e.getMessage().contains(option.name()), e.getMessage());
            assertTrue(e.getMessage().contains(min + ".." + max), e.getMessage());
            assertTrue(e.getMessage().contains(Integer.toString(bad)), e.getMessage());
        }
    }

    @ParameterizedTest
    @MethodSource("allOptions")
    void wrongTypeIsRefused(RdmaOption<?> option) {
        Object wrong = option.type() == String.class ? 1 : "not a " + option.type().getSimpleName();
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> option.validate(wrong));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains(option.name()), e.getMessage());
        assertTrue(e.getMessage().contains(option.type().getSimpleName()), e.getMessage());
    }

    @Test
    void nearMissTypesAreRefused() {
        assertThrows(InvalidRequestException.class, () -> RdmaOption.SEND_QUEUE_DEPTH.validate(128L));
        assertThrows(InvalidRequestException.class, () -> RdmaOption.SEND_QUEUE_DEPTH.validate((short) 128));
        assertThrows(InvalidRequestException.class, () -> RdmaOption.CREDIT_FLOW_CONTROL.validate("true"));
        assertThrows(InvalidRequestException.class, () -> RdmaOption.CONNECT_TIMEOUT.validate(10_000));
        assertThrows(InvalidRequestException.class, () -> RdmaOption.COMPLETION_QUEUE_MODE.validate("SHARED"));
        assertThrows(InvalidRequestException.class,
                () -> RdmaOption.IDLE_STRATEGY.validate(PollerIdleStrategy.Kind.BUSY_SPIN));
    }

    @ParameterizedTest
    @MethodSource("allOptions")
    void nullIsRefusedNamingTheOption(RdmaOption<?> option) {
        NullPointerException e = assertThrows(NullPointerException.class, () -> option.validate(null));
        assertEquals(option.name(), e.getMessage());
    }

    @Test
    void connectTimeoutMustBePositive() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofNanos(-1), Duration.ofMillis(-1),
                Duration.ofSeconds(-10), Duration.ofNanos(999_999)}) {
            InvalidRequestException e = assertThrows(InvalidRequestException.class,
                    () -> RdmaOption.CONNECT_TIMEOUT.validate(bad), bad.toString());
            assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
            assertTrue(e.getMessage().contains("CONNECT_TIMEOUT"), e.getMessage());
        }
        assertEquals(Duration.ofMillis(1), RdmaOption.CONNECT_TIMEOUT.validate(Duration.ofMillis(1)));
        assertEquals(Duration.ofMinutes(5), RdmaOption.CONNECT_TIMEOUT.validate(Duration.ofMinutes(5)));
    }

    @Test
    void connectTimeoutAtMost2Pow31Minus1Millis() {
        Duration max = Duration.ofMillis(Integer.MAX_VALUE);
        assertEquals(max, RdmaOption.CONNECT_TIMEOUT.validate(max));
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaOption.CONNECT_TIMEOUT.validate(Duration.ofMillis(Integer.MAX_VALUE + 1L)));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("CONNECT_TIMEOUT"), e.getMessage());
        assertThrows(InvalidRequestException.class, () -> RdmaOption.CONNECT_TIMEOUT.validate(Duration.ofDays(365)));
    }

    @Test
    void connectTimeoutHugeDurationIsRefusedAsInvalidRequest() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaOption.CONNECT_TIMEOUT.validate(Duration.ofSeconds(Long.MAX_VALUE)));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("CONNECT_TIMEOUT"), e.getMessage());
    }

    @Test
    void otherTypedOptionsAcceptEveryValueOfTheirType() {
        assertEquals(false, RdmaOption.CREDIT_FLOW_CONTROL.validate(false));
        assertEquals(CompletionQueueMode.PER_CONNECTION,
                RdmaOption.COMPLETION_QUEUE_MODE.validate(CompletionQueueMode.PER_CONNECTION));
        PollerIdleStrategy backoff = PollerIdleStrategy.backoff();
        assertSame(backoff, RdmaOption.IDLE_STRATEGY.validate(backoff));
        assertSame(PollerIdleStrategy.busySpin(), RdmaOption.IDLE_STRATEGY.validate(PollerIdleStrategy.busySpin()));
    }
}
