package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.device.PoolRelease;
import io.reactiverdma.reactive.impl.verbs.jna.JnaRdmaStack;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/**
 * {@link MemoryAfterBurstScenario} on rxe in the VM: 200 clients (the README's 1,000-client measurement scales
 * linearly: each echo connection pins its receive buffers and its streaming-send staging area). Idle slabs
 * are given back after 2 s; the slack covers the emulated device's slow deregistration and closes. Prints the
 * {@code MEMORY-BURST} lines quoted in docs/memory-and-buffers.md.
 */
@Tag(RxeTestSupport.TAG)
class MemoryAfterBurstRxeTest {
    private static final Duration IDLE = Duration.ofSeconds(2);

    private MemoryAfterBurstScenario scenario;

    @AfterEach
    void close() {
        if (scenario != null) {
            scenario.close();
        }
    }

    @Test
    void pinnedMemoryReturnsToTheBaselineAfterABurstOfConnectionsAndANewBurstWorks() {
        String host = RxeResources.requireDevice();
        scenario = new MemoryAfterBurstScenario(new RdmaEngine(new JnaRdmaStack(), new PoolRelease(IDLE, 0)), host,
                Duration.ofMinutes(3), IDLE.plusSeconds(60));
        scenario.run(200);
    }
}
