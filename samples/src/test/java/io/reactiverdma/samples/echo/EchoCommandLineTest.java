package io.reactiverdma.samples.echo;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Exit statuses of the main class, on a host without RDMA. */
class EchoCommandLineTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Echo.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void badUsageExitsTwoWithTheReasonAndTheUsage() {
        assertEquals(2, run("client"));
        assertTrue(err().startsWith("echo: client needs exactly one HOST"), err());
        assertTrue(err().contains("usage: echo demo"), err());
    }

    @Test
    void helpExitsZero() {
        assertEquals(0, run("--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("usage: echo demo"));
    }

    @Test
    void aClientThatCannotConnectExitsOneWithATypedError() {
        // No RDMA here (or nobody on port 1): either way the API's typed exception, printed, status 1.
        assertEquals(1, run("client", "127.0.0.1", "-p", "1", "-n", "1", "--timeout-ms", "3000"));
        assertTrue(err().startsWith("echo: FAILED: Rdma"), err());
    }
}
