package io.reactiverdma.samples.bulk;

import io.reactiverdma.samples.common.UsageException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BulkOptionsTest {
    @Test
    void defaults() {
        BulkOptions o = BulkOptions.parse("demo");
        assertEquals(BulkOptions.Command.DEMO, o.command());
        assertEquals(TransferMode.PUSH, o.mode());
        assertEquals(1L << 30, o.size());
        assertEquals(1 << 20, o.chunkSize());
        assertEquals(8, o.window());
        assertEquals(0, o.port(), "demo: a free port");
        assertNull(o.file());
        assertNull(o.out());
        assertEquals(Duration.ofSeconds(30), o.timeout());
        assertEquals(BulkOptions.DEFAULT_PORT, BulkOptions.parse("receive").port());
    }

    @Test
    void sendWithEverything() {
        BulkOptions o = BulkOptions.parse("send", "10.0.0.1", "--mode", "pull", "--file", "/tmp/x", "--chunk", "256k",
                "--window", "16", "-p", "9000", "--timeout-ms", "5000");
        assertEquals("10.0.0.1", o.host());
        assertEquals(TransferMode.PULL, o.mode());
        assertEquals(Path.of("/tmp/x"), o.file());
        assertEquals(256 << 10, o.chunkSize());
        assertEquals(16, o.window());
        assertEquals(9000, o.port());
        assertEquals(Duration.ofMillis(5000), o.timeout());
    }

    @Test
    void receiveOptions() {
        BulkOptions o = BulkOptions.parse("receive", "--out", "/tmp/o", "--once", "--delay-ms", "20", "--host", "h");
        assertEquals(Path.of("/tmp/o"), o.out());
        assertTrue(o.once());
        assertEquals(Duration.ofMillis(20), o.delayPerChunk());
        assertEquals("h", o.host());
        assertFalse(BulkOptions.parse("receive").once());
    }

    @Test
    void helpAnywhere() {
        assertEquals(BulkOptions.Command.HELP, BulkOptions.parse("send", "-h", "--bogus").command());
    }

    @Test
    void badCommandLinesNameTheBadOption() {
        bad("missing command (demo, receive or send)");
        bad("unknown command 'copy' (demo, receive or send)", "copy");
        bad("send needs exactly one HOST (the receiver's address), got none", "send");
        bad("--mode must be push or pull, got 'sideways'", "demo", "--mode", "sideways");
        bad("--window must be in 1..64, got 65", "demo", "--window", "65");
        bad("--chunk must be in 1..4194304, got 8388608", "demo", "--chunk", "8m");
        bad("--chunk x --window must be at most 67108864 bytes, got 4194304 x 32", "demo", "--chunk", "4m",
                "--window", "32");
        bad("--file and --size exclude each other (a file's size is its own)", "demo", "--file", "f", "--size", "1m");
        bad("--out does not apply to send (the receiver writes the file; use --file for what to send)", "send", "h",
                "--out", "f");
        bad("--mode does not apply to receive (the sender picks the mode)", "receive", "--mode", "pull");
        bad("--host does not apply to send (send takes the receiver's address as HOST)", "send", "h", "--host", "x");
        bad("--once does not apply to demo (demo and send do one transfer anyway)", "demo", "--once");
        bad("--size needs a size such as 4096, 64k, 1m or 1g, got 'lots'", "demo", "--size", "lots");
        bad("unknown option --fast", "demo", "--fast");
        bad("unexpected arguments [extra]", "receive", "extra");
        bad("--port must be in 1..65535, got 0", "send", "h", "--port", "0");
    }

    private static void bad(String message, String... args) {
        assertEquals(message, assertThrows(UsageException.class, () -> BulkOptions.parse(args)).getMessage());
    }

    @Test
    void aReceiverRefusesWhatItWouldNotAccept() {
        assertNull(BulkOptions.refusal(1 << 20, 8, 1L << 30));
        assertEquals("window 0 is not in 1..64", BulkOptions.refusal(1 << 20, 0, 1));
        assertEquals("chunk size 0 is not in 1..4194304", BulkOptions.refusal(0, 8, 1));
        assertTrue(BulkOptions.refusal(4 << 20, 32, 1).startsWith("chunk size x window 134217728 is above"));
        assertEquals("negative size -1", BulkOptions.refusal(1, 1, -1));
    }
}
