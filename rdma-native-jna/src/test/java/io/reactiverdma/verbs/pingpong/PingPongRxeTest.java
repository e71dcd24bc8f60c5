package io.reactiverdma.verbs.pingpong;

import io.reactiverdma.testsupport.RxeTestSupport;
import io.reactiverdma.verbs.GidEntry;
import io.reactiverdma.verbs.VerbsContext;
import io.reactiverdma.verbs.VerbsDevice;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The raw-verbs ping-pong (PingPong) on a real RDMA device: Java to Java with every reply checked, and against rdma-core's
 * own {@code ibv_rc_pingpong} in both roles (a real C peer using the same verbs).
 */
@Tag(RxeTestSupport.TAG)
class PingPongRxeTest {
    private static final long TIMEOUT_S = 120;
    private String device;
    private int gidIndex;

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
        try (VerbsContext ctx = VerbsDevice.open(RxeTestSupport.deviceName())) {
            device = ctx.deviceName();
            gidIndex = ctx.findRoceV2Ipv4Gid(1).map(GidEntry::index).orElse(0);
        }
    }

    @Test
    void javaToJavaEveryReplyChecked() throws Exception {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        RoundTripStats stats = PingPong.run(PingOptions.parse("demo", "-d", device, "-n", "200", "-s", "256"),
                new PrintStream(text, true, StandardCharsets.UTF_8));
        assertEquals(200, stats.count());
        assertTrue(stats.minNs() > 0);
        String out = text.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("ping server: echoed 200 messages of 256 bytes"), out);
        assertTrue(out.contains("every reply checked byte for byte: 200 round trips"), out);
    }

    @Test
    void javaClientAgainstIbvRcPingpongServer() throws Exception {
        int port = freePort();
        Process server = start("ibv_rc_pingpong", "-d", device, "-g", String.valueOf(gidIndex), "-s", "64",
                "-n", "100", "-m", "1024", "-p", String.valueOf(port));
        try {
            awaitListening(port, server);
            RoundTripStats stats = PingPong.run(PingOptions.parse("client", "127.0.0.1", "-p", String.valueOf(port),
                    "-d", device, "-g", String.valueOf(gidIndex), "-s", "64", "-n", "100", "-m", "1024",
                    "--no-verify"), System.out);
            assertEquals(100, stats.count());
            assertExitsZero(server);
        } finally {
            server.destroyForcibly();
        }
    }

    @Test
    void ibvRcPingpongClientAgainstJavaServer() throws Exception {
        PingOptions options = PingOptions.parse("server", "-d", device, "-g", String.valueOf(gidIndex), "-s", "64",
                "-n", "100", "-m", "1024");
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try {
                    PingPong.serve(options, listener, System.out);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Process client = start("ibv_rc_pingpong", "-d", device, "-g", String.valueOf(gidIndex), "-s", "64",
                    "-n", "100", "-m", "1024", "-p", String.valueOf(listener.getLocalPort()), "127.0.0.1");
            try {
                assertExitsZero(client);
                server.get(TIMEOUT_S, TimeUnit.SECONDS);
            } finally {
                client.destroyForcibly();
            }
        }
    }

    private static Process start(String... command) throws Exception {
        return new ProcessBuilder(command).redirectErrorStream(true).inheritIO().start();
    }

    private static void assertExitsZero(Process p) throws Exception {
        if (!p.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
            fail("ibv_rc_pingpong did not finish within " + TIMEOUT_S + " s");
        }
        assertEquals(0, p.exitValue(), "ibv_rc_pingpong exit status");
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }

    /** Waits until some process listens on TCP {@code port} (read from /proc: a probe connect would be its only accept). */
    private static void awaitListening(int port, Process server) throws Exception {
        String needle = String.format(Locale.ROOT, ":%04X ", port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            List<String> lines = new ArrayList<>(Files.readAllLines(Path.of("/proc/net/tcp")));
            if (Files.exists(Path.of("/proc/net/tcp6"))) {
                lines.addAll(Files.readAllLines(Path.of("/proc/net/tcp6")));
            }
            for (String line : lines) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && (f[1] + " ").contains(needle) && f[3].equals("0A")) {
                    return;
                }
            }
            if (!server.isAlive()) {
                fail("ibv_rc_pingpong server exited early with status " + server.exitValue());
            }
            Thread.sleep(50);
        }
        fail("ibv_rc_pingpong server did not listen on port " + port + " within 30 s");
    }
}
