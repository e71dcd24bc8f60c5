package io.reactiverdma.samples.bulk;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Exit statuses of the main class, on a host without RDMA. */
class BulkCommandLineTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return BulkTransfer.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void badUsageExitsTwoNamingTheOption() {
        assertEquals(2, run("send", "h", "--window", "0"));
        assertTrue(err().startsWith("bulk: --window must be in 1..64, got 0"), err());
        assertTrue(err().contains("usage: bulk demo"), err());
    }

    @Test
    void helpExitsZero() {
        assertEquals(0, run("--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("usage: bulk demo"));
    }

    @Test
    void aMissingFileExitsOne() {
        assertEquals(1, run("send", "127.0.0.1", "--file", "/nonexistent/bulk-input"));
        assertTrue(err().startsWith("bulk: FAILED: NoSuchFileException: /nonexistent/bulk-input"), err());
    }

    @Test
    void aSenderThatCannotConnectExitsOneWithATypedError() {
        assertEquals(1, run("send", "127.0.0.1", "-p", "1", "--size", "1k", "--timeout-ms", "3000"));
        assertTrue(err().startsWith("bulk: FAILED: Rdma"), err());
    }
}
