package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.device.PoolRelease;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/**
 * {@link MemoryAfterBurstScenario} on the loopback device: the real engine, its pool registering through the
 * loopback protection domain, idle slabs given back after 300 ms (nothing kept).
 */
@Timeout(120)
class MemoryAfterBurstHostTest {
    private static final Duration IDLE = Duration.ofMillis(300);

    private final LoopbackStack stack = LoopbackStack.create();
    private final MemoryAfterBurstScenario scenario = new MemoryAfterBurstScenario(
            new RdmaEngine(stack, new PoolRelease(IDLE, 0)), "127.0.0.1", Duration.ofSeconds(30),
            IDLE.plusSeconds(15));

    @AfterEach
    void close() {
        try {
            scenario.close();
        } finally {
            stack.close();
        }
    }

    @Test
    void pinnedMemoryReturnsToTheBaselineAfterABurstOfConnectionsAndANewBurstWorks() {
        scenario.run(40);
    }
}
