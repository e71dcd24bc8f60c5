package io.reactiverdma.samples.echo;

import io.reactiverdma.samples.common.ServerLimits;

import io.reactiverdma.samples.common.UsageException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EchoOptionsTest {
    @Test
    void defaultsPerMode() {
        EchoOptions demo = EchoOptions.parse("demo");
        assertEquals(EchoOptions.Mode.DEMO, demo.mode());
        assertNull(demo.host(), "demo finds the device's address itself");
        assertEquals(0, demo.port(), "demo listens on a free port");
        assertEquals(1000, demo.count());
        assertEquals(64, demo.size());
        assertEquals(Duration.ofSeconds(10), demo.timeout());

        EchoOptions server = EchoOptions.parse("server");
        assertNull(server.host());
        assertEquals(7471, server.port());
        assertEquals(4096, server.maxMessageSize());

        EchoOptions client = EchoOptions.parse("client", "10.77.0.1");
        assertEquals("10.77.0.1", client.host());
        assertEquals(7471, client.port());
    }

    @Test
    void parsesEveryOption() {
        EchoOptions c = EchoOptions.parse("client", "-p", "9000", "10.0.0.2", "-n", "10", "-s", "4096",
                "--timeout-ms", "2500");
        assertEquals(EchoOptions.Mode.CLIENT, c.mode());
        assertEquals("10.0.0.2", c.host());
        assertEquals(9000, c.port());
        assertEquals(10, c.count());
        assertEquals(4096, c.size());
        assertEquals(Duration.ofMillis(2500), c.timeout());

        EchoOptions s = EchoOptions.parse("server", "--host", "10.77.0.1", "--port", "0", "--max-size", "65536");
        assertEquals("10.77.0.1", s.host());
        assertEquals(0, s.port());
        assertEquals(65536, s.maxMessageSize());

        EchoOptions d = EchoOptions.parse("demo", "--host", "10.77.0.1", "--count", "5", "--size", "1");
        assertEquals("10.77.0.1", d.host());
        assertEquals(5, d.count());
        assertEquals(1, d.size());
    }

    @Test
    void theServerTakesTheEnginesServerOptions() {
        EchoOptions s = EchoOptions.parse("server", "--shared-receive-queue-depth", "512", "--max-connections", "100",
                "--accept-timeout-ms", "2500");
        assertEquals(new ServerLimits(512, 100, Duration.ofMillis(2500), ServerLimits.DEFAULTS.idleProbeInterval()), s.limits());
        assertEquals("shared receive queue 512 buffers, max connections 100, accept timeout 2500 ms, idle probe after "
                + ServerLimits.DEFAULTS.idleProbeInterval().toMillis() + " ms", s.limits().describe());
        assertEquals(ServerLimits.DEFAULTS, EchoOptions.parse("server").limits());
        assertEquals("shared receive queue off, max connections unlimited, accept timeout 5000 ms, idle probe after "
                + "20000 ms", ServerLimits.DEFAULTS.describe());
        org.junit.jupiter.api.Assertions.assertThrows(io.reactiverdma.samples.common.UsageException.class,
                () -> EchoOptions.parse("client", "h", "--max-connections", "3"));
        org.junit.jupiter.api.Assertions.assertThrows(io.reactiverdma.samples.common.UsageException.class,
                () -> EchoOptions.parse("server", "--shared-receive-queue-depth", "-1"));
    }

    @Test
    void helpAnywhere() {
        assertEquals(EchoOptions.Mode.HELP, EchoOptions.parse("--help").mode());
        assertEquals(EchoOptions.Mode.HELP, EchoOptions.parse("client", "-h").mode());
    }

    @Test
    void badCommandLinesAreUsageExceptionsThatSayWhy() {
        assertUsage("missing mode", EchoOptions::parse);
        assertUsage("unknown mode 'ping'", () -> EchoOptions.parse("ping"));
        assertUsage("client needs exactly one HOST", () -> EchoOptions.parse("client"));
        assertUsage("client needs exactly one HOST", () -> EchoOptions.parse("client", "a", "b"));
        assertUsage("--host does not apply to client", () -> EchoOptions.parse("client", "--host", "a"));
        assertUsage("-n does not apply to server", () -> EchoOptions.parse("server", "-n", "5"));
        assertUsage("--max-size does not apply to demo", () -> EchoOptions.parse("demo", "--max-size", "5"));
        assertUsage("unexpected arguments [extra]", () -> EchoOptions.parse("demo", "extra"));
        assertUsage("unknown option --iters", () -> EchoOptions.parse("demo", "--iters", "5"));
        assertUsage("-s needs a size such as 4096, 64k, 1m or 1g, got 'x'", () -> EchoOptions.parse("demo", "-s", "x"));
        assertUsage("-s must be in 1..1048576, got 0", () -> EchoOptions.parse("demo", "-s", "0"));
        assertUsage("-s must be in 1..1048576, got 1048577", () -> EchoOptions.parse("demo", "-s", "1048577"));
        assertUsage("-n must be in 1..100000000, got 99999999999", () -> EchoOptions.parse("demo", "-n", "99999999999"));
        assertUsage("-p must be in 1..65535, got 0", () -> EchoOptions.parse("client", "h", "-p", "0"));
        assertUsage("-p must be in 0..65535, got 70000", () -> EchoOptions.parse("server", "-p", "70000"));
        assertUsage("-p needs a value", () -> EchoOptions.parse("demo", "-p"));
        assertUsage("--host needs a value", () -> EchoOptions.parse("demo", "--host", "-n"));
        assertUsage("--timeout-ms must be in 1..", () -> EchoOptions.parse("demo", "--timeout-ms", "0"));
    }

    private static void assertUsage(String expected, org.junit.jupiter.api.function.Executable parse) {
        UsageException e = assertThrows(UsageException.class, parse);
        assertTrue(e.getMessage().contains(expected), "'" + e.getMessage() + "' should contain '" + expected + "'");
    }
}
