package io.reactiverdma.reactive.impl.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
