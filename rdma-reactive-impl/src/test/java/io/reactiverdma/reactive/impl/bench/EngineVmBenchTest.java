package io.reactiverdma.reactive.impl.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link EngineVmBench}, the engine's side of {@code scripts/bench-vm}: the server and the client it configures
 * are valid for their roles, so a run does not fail only minutes into a VM boot. Before: the server was given
 * the client-only {@code CONNECT_TIMEOUT}, and every engine measurement of a quiet {@code scripts/bench-vm} run
 * (2026-11-27) failed with "option CONNECT_TIMEOUT is not for a server". Building needs no device.
 */
class EngineVmBenchTest {
    @ParameterizedTest(name = "--idle {0}")
    @ValueSource(strings = {"busy", "event", "event:64", "backoff"})
    void theServerAndTheClientAreConfiguredForTheirRoles(String idle) {
        EngineVmBench.Options o = EngineVmBench.Options.parse(new String[] {"--host", "10.77.0.1", "--idle", idle,
                "--cq", "per-connection"});
        assertDoesNotThrow(o::server, "the server's configuration");
        assertDoesNotThrow(() -> o.client(7471), "the client's configuration");
    }

    @Test
    void anUnknownOptionIsRefusedWhenParsed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EngineVmBench.Options.parse(new String[] {"--host", "h", "--no-such-option"}));
        assertEquals("unknown option --no-such-option", e.getMessage());
    }

    /** The rate test's CPU split: the system part read from /proc/self/stat is a part of the process's CPU time. */
    @Test
    void theSystemCpuTimeIsReadAndIsAPartOfTheProcessCpuTime() throws Exception {
        // Some system time of our own: reads of /proc make system calls.
        for (int i = 0; i < 2_000; i++) {
            java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/self/stat"));
        }
        long system = EngineVmBench.processSystemCpuNanos();
        long total = EngineVmBench.processCpuNanos();
        assertTrue(system >= 0, "stime of /proc/self/stat parsed: " + system);
        assertTrue(system % 10_000_000L == 0, "in clock ticks of 10 ms: " + system);
        // Both are sampled by the kernel at its own resolution: the tick-rounded part may exceed the total by a tick.
        assertTrue(system <= total + 10_000_000L, "system " + system + " ns within the process's " + total + " ns");
    }
}
