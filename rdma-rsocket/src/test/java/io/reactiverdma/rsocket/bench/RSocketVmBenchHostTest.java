package io.reactiverdma.rsocket.bench;

import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RSocketVmBench}, the harness of {@code scripts/bench-rsocket-vm}, runs end to end on the loopback
 * device (TCP on 127.0.0.1) with a few round trips and items, server and client in this JVM: a harness
 * that fails here would otherwise only fail minutes into a VM boot. Not a measurement.
 */
class RSocketVmBenchHostTest {
    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"engine", "rdma", "tcp"})
    void theHarnessMeasuresEveryMetricOverEachTransport(String transport) {
        RSocketVmBench.Options o = RSocketVmBench.Options.parse(new String[] {"--role", "client", "--transport",
                transport, "--host", rdma.host(), "--port", "0",
                "--lat-n", "50", "--lat-warmup", "10", "--stream-n", "200", "--stream-warmup", "20"});
        RSocketVmBench.Server server = RSocketVmBench.startServer(o);
        String out;
        PrintStream stdout = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            o.port = server.port();
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            RSocketVmBench.runClient(o);
        } finally {
            System.setOut(stdout);
            server.stop().run();
            out = captured.toString(StandardCharsets.UTF_8);
            stdout.print(out);
        }
        for (String key : List.of("rr_median_us", "rr_p99_us", "stream_64_kpps", "stream_64_MBps", "stream_4096_kpps",
                "stream_4096_MBps")) {
            assertTrue(out.lines().anyMatch(l -> l.startsWith("RESULT " + key + " ")), key + " missing in:\n" + out);
        }
    }

    @Test
    void aPayloadLargerThanOneReceiveBufferIsRefusedWhenTheOptionsAreParsed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RSocketVmBench.Options.parse(
                new String[] {"--role", "client", "--transport", "rdma", "--host", "h", "--sizes", "64,65536"}));
        assertEquals("payloads of at most 8128 B, got 65536", e.getMessage());
    }
}
