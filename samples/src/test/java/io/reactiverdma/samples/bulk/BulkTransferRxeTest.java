package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The bulk-transfer sample on a real RDMA device (rxe in the VM): receiver and sender through the reactive API
 * and the engine; for the receiver's death, the receiver in a JVM of its own that the test kills.
 */
@Tag(RxeTestSupport.TAG)
class BulkTransferRxeTest {
    /**
     * The size of each mode's large transfer. The issue asks for 1 GiB; under the VM's emulation a transfer
     * moves 2.5 to 9 MiB/s depending on the host's load (SHA-256 on both ends and the generator dominate), so
     * 1 GiB takes 2 to 4 minutes per mode: push moves 1 GiB here, pull 128 MiB. Change them with
     * -Dbulk.test.pushBytes / -Dbulk.test.pullBytes; the README has the measured 1 GiB times of both.
     */
    private static long largeBytes(TransferMode mode) {
        // 256 MiB: 256 chunks, enough for the window and heap checks to catch per-chunk holding (16 MiB of
        // growth allowed, 166 chunks between the two heap samples). 1 GiB took 168 s of CI's device run alone;
        // -Dbulk.test.pushBytes=1073741824 runs it (README, "Sample: bulk transfer").
        return mode == TransferMode.PUSH ? Long.getLong("bulk.test.pushBytes", 256L << 20)
                : Long.getLong("bulk.test.pullBytes", 128L << 20);
    }
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Consumer<String> LOG = line -> System.out.println("  " + line);

    private final List<ReceiveReport> reports = new CopyOnWriteArrayList<>();
    private BulkReceiver receiver;
    private RdmaConnection conn;
    private Process receiverProcess;

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    @AfterEach
    void close() {
        if (conn != null) {
            conn.dispose();
            conn.onDispose().block(WAIT);
        }
        if (receiver != null) {
            receiver.close();
        }
        if (receiverProcess != null) {
            receiverProcess.destroyForcibly();
        }
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    private void startReceiver(Duration stallTimeout, Duration delayPerChunk) {
        receiver = BulkReceiver.start(host(), 0, new BulkReceiver.Config(null, stallTimeout, delayPerChunk), WAIT,
                LOG, null, reports::add);
    }

    private BulkSender sender(ChunkSource source, TransferMode mode, int chunkSize, int window, Duration stall) {
        conn = BulkSender.client(host(), receiver.address().getPort(), window, WAIT).connectNow(WAIT);
        return new BulkSender(conn, source, mode, chunkSize, window, stall, LOG);
    }

    /**
     * A large generated stream in each mode (256 MiB push, 128 MiB pull: {@link #largeBytes}), hashes compared;
     * meanwhile the test watches the flow: the sender never has more than the window handed over beyond what
     * the receiver consumed, and the heap after a GC does not grow from a quarter of the way to nine tenths (it
     * would, with any per-chunk buffering).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TransferMode.class)
    void aLargeGeneratedStreamArrivesWithTheSameSha256AndFlatMemory(TransferMode mode) throws Exception {
        int chunk = 1 << 20;
        int window = 8;
        long size = largeBytes(mode);
        startReceiver(WAIT, Duration.ZERO);
        BulkSender sender = sender(new GeneratedStream(size), mode, chunk, window, WAIT);
        CompletableFuture<SendReport> done = sender.run().toFuture();
        long heapAtQuarter = -1;
        long heapAtNineTenths = -1;
        long maxAhead = 0;
        while (!done.isDone()) {
            // issued first, then consumed: the difference can only overstate what the receiver has not
            // consumed yet if the sender really ran ahead of the window
            long issued = sender.bytesIssued();
            long consumed = receiver.bytesConsumed();
            maxAhead = Math.max(maxAhead, issued - consumed);
            if (heapAtQuarter < 0 && consumed >= size / 4) {
                heapAtQuarter = heapAfterGc();
            } else if (heapAtNineTenths < 0 && consumed >= size * 9 / 10) {
                heapAtNineTenths = heapAfterGc();
            }
            Thread.sleep(20);
        }
        SendReport r = done.get();
        System.out.println("  " + mode.label() + ": " + size + " bytes in " + r.elapsedNs() / 1_000_000
                + " ms (" + Progress.rate(r.bytes(), r.elapsedNs()) + ", in the VM), max ahead " + maxAhead
                + " bytes, heap after GC " + heapAtQuarter / 1024 + " KiB at 1/4, " + heapAtNineTenths / 1024
                + " KiB at 9/10");
        assertTrue(r.hashesMatch(), r.toString());
        assertEquals(size, r.receiverBytes());
        assertTrue(r.maxChunksInFlight() <= window, r.toString());
        assertTrue(maxAhead <= (long) window * chunk, "the sender ran " + maxAhead + " bytes ahead");
        assertTrue(heapAtQuarter > 0 && heapAtNineTenths > 0, "heap samples taken");
        assertTrue(heapAtNineTenths - heapAtQuarter < 16 << 20, "heap after GC grew from " + heapAtQuarter
                + " to " + heapAtNineTenths + " bytes");
        ReceiveReport got = awaitReport();
        assertTrue(got.succeeded(), String.valueOf(got.failure()));
        assertArrayEquals(r.sha256(), got.sha256());
        assertTrue(got.maxChunksInFlight() <= window);
    }

    /** The demo's command line with a file whose size is not a multiple of the chunk size: same bytes out. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TransferMode.class)
    void aFileWhoseSizeIsNoMultipleOfTheChunkArrivesByteForByte(TransferMode mode, @TempDir Path dir)
            throws IOException {
        byte[] content = new byte[3 * (64 << 10) + 12_345];
        new Random(42).nextBytes(content);
        Path in = Files.write(dir.resolve("in.bin"), content);
        Path out = dir.resolve("out.bin");
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        int status = BulkTransfer.run(new String[] {"demo", "--mode", mode.label(), "--file", in.toString(), "--out",
                        out.toString(), "--chunk", "64k", "--window", "2"},
                new PrintStream(stdout, true, StandardCharsets.UTF_8), new PrintStream(stderr, true, StandardCharsets.UTF_8));
        String text = stdout.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertEquals(0, status, stderr.toString(StandardCharsets.UTF_8));
        assertTrue(text.contains("bulk sender: hashes match"), text);
        assertArrayEquals(content, Files.readAllBytes(out));
        assertTrue(text.contains("bulk receiver: received " + content.length + " bytes"), text);
    }

    /** A receiver that cannot write its output file tells the sender why: REFUSED with its reason. */
    @Test
    void aReceiverThatCannotWriteItsFileRefusesTheTransferWithItsReason(@TempDir Path dir) {
        receiver = BulkReceiver.start(host(), 0, new BulkReceiver.Config(dir.resolve("no-such-dir/out.bin"), WAIT,
                Duration.ZERO), WAIT, LOG, null, reports::add);
        BulkSender sender = sender(new GeneratedStream(1 << 20), TransferMode.PUSH, 64 << 10, 2, WAIT);
        BulkTransferException e = assertThrows(BulkTransferException.class, () -> sender.run().block(WAIT));
        System.out.println("  sender failed as expected: " + e.getMessage());
        assertEquals(BulkTransferException.Reason.REFUSED, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains("cannot write " + dir.resolve("no-such-dir/out.bin")), e.getMessage());
    }

    /** A receiver that takes 40 ms per chunk paces the sender: never more than the window ahead. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TransferMode.class)
    void aSlowReceiverSetsThePace(TransferMode mode) throws Exception {
        int chunk = 64 << 10;
        int window = 4;
        int chunks = 48;
        Duration delay = Duration.ofMillis(40);
        startReceiver(WAIT, delay);
        BulkSender sender = sender(new GeneratedStream((long) chunks * chunk), mode, chunk, window, WAIT);
        long t0 = System.nanoTime();
        CompletableFuture<SendReport> done = sender.run().toFuture();
        long maxAhead = 0;
        while (!done.isDone()) {
            long issued = sender.bytesIssued();
            maxAhead = Math.max(maxAhead, issued - receiver.bytesConsumed());
            Thread.sleep(5);
        }
        SendReport r = done.get();
        long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("  " + mode.label() + ": " + chunks + " chunks in " + elapsedMs + " ms, max ahead "
                + maxAhead + " bytes, max in flight " + r.maxChunksInFlight());
        assertTrue(r.hashesMatch(), r.toString());
        assertTrue(elapsedMs >= chunks * delay.toMillis(), "paced by the receiver: " + elapsedMs + " ms");
        assertEquals(window, r.maxChunksInFlight(), "the window filled up, and no more");
        assertTrue(maxAhead <= (long) window * chunk, "the sender ran " + maxAhead + " bytes ahead");
        assertTrue(maxAhead > (long) (window - 2) * chunk, "the sender did use its window: " + maxAhead);
    }

    /** A receiver that stops consuming: the sender's watchdog fails it, typed, instead of a hang. */
    @Test
    void aReceiverThatStopsConsumingFailsTheSenderWithStalled() {
        startReceiver(Duration.ofSeconds(120), Duration.ofSeconds(100));
        BulkSender sender = sender(new GeneratedStream(64L << 20), TransferMode.PUSH, 64 << 10, 4,
                Duration.ofSeconds(3));
        long t0 = System.nanoTime();
        BulkTransferException e = assertThrows(BulkTransferException.class, () -> sender.run().block(WAIT));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("  failed after " + ms + " ms: " + e.getMessage());
        assertEquals(BulkTransferException.Reason.STALLED, e.reason());
        assertTrue(ms < 20_000, "failed within 20 s, took " + ms + " ms");
    }

    /**
     * The receiver in a JVM of its own, killed (SIGKILL) mid-transfer: the sender fails with PEER_GONE within a
     * bound, far below its stall timeout (so the engine's report of the death, not the watchdog, ended it).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TransferMode.class)
    void aReceiverKilledMidTransferFailsTheSenderWithPeerGone(TransferMode mode) throws Exception {
        int port = startReceiverProcess();
        conn = BulkSender.client(host(), port, 8, WAIT).connectNow(WAIT);
        Duration stall = Duration.ofSeconds(120);
        BulkSender sender = new BulkSender(conn, new GeneratedStream(64L << 30), mode, 1 << 20, 8, stall, LOG);
        CompletableFuture<SendReport> done = sender.run().toFuture();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (sender.bytesConfirmed() < 16 << 20) {
            if (done.isDone() || System.nanoTime() > deadline) {
                fail("the transfer did not get going: " + sender.bytesConfirmed() + " bytes, " + done);
            }
            Thread.sleep(20);
        }
        long killedAt = System.nanoTime();
        receiverProcess.destroyForcibly();
        assertTrue(receiverProcess.waitFor(30, TimeUnit.SECONDS), "the receiver died");
        Throwable failure = null;
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            failure = e.getCause();
        }
        long ms = (System.nanoTime() - killedAt) / 1_000_000;
        assertNotNull(failure, "the sender failed");
        System.out.println("  " + mode.label() + ": sender failed " + ms + " ms after the kill: " + failure);
        assertTrue(failure instanceof BulkTransferException, "typed: " + failure);
        BulkTransferException e = (BulkTransferException) failure;
        assertEquals(BulkTransferException.Reason.PEER_GONE, e.reason(), e.getMessage());
        assertTrue(e.getMessage().startsWith("the receiver "), e.getMessage());
        assertTrue(e.bytesConfirmed() >= 16 << 20, e.getMessage());
        assertTrue(ms < 60_000, "within 60 s of the kill: " + ms + " ms");
    }

    /** Starts {@code bulk receive --port 0} in a new JVM; returns its port once it listens. */
    private int startReceiverProcess() throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--enable-native-access") || a.startsWith("-XX:TieredStopAtLevel"))
                .toList());
        command.addAll(List.of("-cp", classPath(), BulkTransfer.class.getName(), "receive", "--host", host(),
                "--port", "0"));
        receiverProcess = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader lines = new BufferedReader(new InputStreamReader(receiverProcess.getInputStream(),
                StandardCharsets.UTF_8));
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Pattern listening = Pattern.compile("listening on [^:]+:(\\d+)");
        Thread pump = new Thread(() -> {
            try {
                for (String line; (line = lines.readLine()) != null; ) {
                    System.out.println("  [receiver process] " + line);
                    Matcher m = listening.matcher(line);
                    if (m.find()) {
                        port.complete(Integer.parseInt(m.group(1)));
                    }
                }
            } catch (IOException e) {
                port.completeExceptionally(e);
            }
            port.completeExceptionally(new IllegalStateException("the receiver process ended before listening"));
        }, "receiver-process-output");
        pump.setDaemon(true);
        pump.start();
        try {
            return port.get(120, TimeUnit.SECONDS); // a cold JVM under emulation
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the receiver process did not start listening", e);
        }
    }

    /**
     * This JVM's class path: the launcher's, plus the URLs of the class loaders above this class (the JUnit
     * console launcher in the VM loads the tests from a class loader of its own).
     */
    private static String classPath() {
        Set<String> entries = new LinkedHashSet<>();
        for (ClassLoader cl = BulkTransferRxeTest.class.getClassLoader(); cl != null; cl = cl.getParent()) {
            if (cl instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (URISyntaxException | IllegalArgumentException e) {
                        throw new IllegalStateException("class path entry " + url, e);
                    }
                }
            }
        }
        entries.addAll(Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator)));
        return String.join(File.pathSeparator, entries);
    }

    /**
     * Issue 24 (review finding 9): with {@code --out FILE}, a second transfer while the first still writes the
     * file used to truncate it and interleave its chunks with the first's, while both senders got matching
     * hashes (computed in memory). Now the second is refused as busy, and the file holds the first's bytes.
     */
    @Test
    void aSecondTransferToTheSameOutputFileIsRefusedWhileTheFirstWritesIt(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out.bin");
        Path other = dir.resolve("other.bin");
        byte[] random = new byte[4 << 20];
        new Random(7).nextBytes(random);
        Files.write(other, random);
        int chunk = 1 << 20;
        // 200 ms per chunk: the first transfer (8 chunks) still writes the file when the second arrives
        receiver = BulkReceiver.start(host(), 0, new BulkReceiver.Config(out, WAIT, Duration.ofMillis(200)), WAIT,
                LOG, null, reports::add);
        BulkSender first = sender(new GeneratedStream(8L << 20), TransferMode.PUSH, chunk, 2, WAIT);
        CompletableFuture<SendReport> firstDone = first.run().toFuture();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (receiver.bytesConsumed() == 0 && !firstDone.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(receiver.bytesConsumed() > 0 && !firstDone.isDone(), "the first transfer is under way");
        RdmaConnection secondConn = BulkSender.client(host(), receiver.address().getPort(), 2, WAIT).connectNow(WAIT);
        try (ChunkSource source = ChunkSource.file(other)) {
            BulkSender second = new BulkSender(secondConn, source, TransferMode.PUSH, chunk, 2, WAIT, LOG);
            BulkTransferException refused = assertThrows(BulkTransferException.class,
                    () -> second.run().block(WAIT), "the second transfer to the same file was accepted");
            assertEquals(BulkTransferException.Reason.REFUSED, refused.reason(), refused.toString());
            assertTrue(refused.getMessage().contains("busy"), refused.getMessage());
        } finally {
            secondConn.dispose();
            secondConn.onDispose().block(WAIT);
        }
        SendReport r = firstDone.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertTrue(r.hashesMatch(), r.toString());
        assertArrayEquals(r.sha256(), Hashing.sha256().digest(Files.readAllBytes(out)),
                "the file is not what the first sender sent");
    }

    private ReceiveReport awaitReport() throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (reports.isEmpty()) {
            if (System.nanoTime() > deadline) {
                fail("no receive report within " + WAIT);
            }
            Thread.sleep(10);
        }
        return reports.get(0);
    }

    private static long heapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
