package io.reactiverdma.samples.bulk;

import io.reactiverdma.samples.common.SampleMain;
import io.reactiverdma.samples.common.ServerRun;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.samples.common.DeviceAddress;

import java.util.List;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The bulk-transfer sample's command line (see {@link BulkOptions#USAGE}):
 * <pre>
 *   bulk demo --mode pull --size 1g        receiver and sender in this JVM, on the local RDMA device's address
 *   bulk receive [--out FILE]              a receiver, until Ctrl-C
 *   bulk send HOST --file PATH             send a file (or --size N of a generated stream) to a receiver
 * </pre>
 * The sender prints its SHA-256 and the receiver's; exits 0 when they match, 1 on a mismatch or any failure
 * (the error is printed), 2 on a bad command line. Progress lines go to stderr, at most one a second.
 */
public final class BulkTransfer {
    private BulkTransfer() {
    }

    public static void main(String[] args) {
        SampleMain.exit(run(args, System.out, System.err));
    }

    /** Runs the command line {@code args}; returns the exit status. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        return SampleMain.run("bulk", BulkOptions.USAGE, args, err, BulkOptions::parse, List.of(BulkTransferException.class, RdmaException.class),
                options -> switch (options.command()) {
                    case HELP -> {
                        out.println(BulkOptions.USAGE);
                        yield 0;
                    }
                    case DEMO -> demo(options, out, err);
                    case RECEIVE -> receive(options, out, err);
                    case SEND -> send(options, options.host(), options.port(), out, err);
                });
    }

    /** Receiver and sender in this JVM on the device's address. */
    private static int demo(BulkOptions o, PrintStream out, PrintStream err) throws IOException {
        String host = DeviceAddress.hostOrFind(o.host(), prefixed(out, "bulk demo"));
        BulkReceiver receiver = BulkReceiver.start(host, o.port(),
                new BulkReceiver.Config(o.out(), o.timeout(), Duration.ZERO), o.timeout(),
                prefixed(out, "bulk receiver"), null, r -> { });
        try {
            InetSocketAddress at = receiver.address();
            out.println("bulk receiver: listening on " + at.getHostString() + ":" + at.getPort());
            return send(o, at.getHostString(), at.getPort(), out, err);
        } finally {
            receiver.close(); // waits until the receiver's side of the connection is closed (and reported)
        }
    }

    /** Connects to a receiver, sends, prints both hashes; 0 when they match. */
    static int send(BulkOptions o, String host, int port, PrintStream out, PrintStream err) throws IOException {
        Consumer<String> log = prefixed(out, "bulk sender");
        try (ChunkSource source = o.file() != null ? ChunkSource.file(o.file()) : new GeneratedStream(o.size())) {
            long t0 = System.nanoTime();
            RdmaConnection conn = BulkSender.client(host, port, o.window(), o.timeout())
                    .connectNow(o.timeout().plusSeconds(5));
            try {
                log.accept("connected to " + conn.remoteAddress() + " in " + (System.nanoTime() - t0) / 1_000_000
                        + " ms; sending " + Progress.bytes(source.size()) + " (" + source.size() + " bytes) of "
                        + source.describe() + ", " + o.mode().label() + ", " + Progress.bytes(o.chunkSize())
                        + " chunks, window " + o.window());
                BulkSender sender = new BulkSender(conn, source, o.mode(), o.chunkSize(), o.window(), o.timeout(),
                        prefixed(err, "bulk sender"));
                // Every stage is bounded by the stall timeout, so this wait is too.
                SendReport r = sender.run().block();
                printReport(r, log);
                return r.hashesMatch() ? 0 : 1;
            } finally {
                conn.dispose();
                conn.onDispose().block(Duration.ofSeconds(30));
            }
        }
    }

    static void printReport(SendReport r, Consumer<String> log) {
        log.accept("sent " + r.bytes() + " bytes in " + BulkReceiver.seconds(r.elapsedNs()) + " ("
                + Progress.rate(r.bytes(), r.elapsedNs()) + "), " + r.mode().label() + ", at most "
                + r.maxChunksInFlight() + " chunks in flight");
        log.accept("sha256 sent     " + Hashing.hex(r.sha256()) + " (" + r.bytes() + " bytes)");
        log.accept("sha256 received " + Hashing.hex(r.receiverSha256()) + " (" + r.receiverBytes()
                + " bytes, the receiver's)");
        log.accept(r.hashesMatch() ? "hashes match" : "MISMATCH: the receiver got other bytes than were sent");
    }

    /** A receiver until Ctrl-C, or for one transfer with --once. */
    private static int receive(BulkOptions o, PrintStream out, PrintStream err) {
        String host = DeviceAddress.hostOrFind(o.host(), prefixed(out, "bulk receiver"));
        CompletableFuture<ReceiveReport> first = new CompletableFuture<>();
        BulkReceiver receiver = BulkReceiver.start(host, o.port(),
                new BulkReceiver.Config(o.out(), o.timeout(), o.delayPerChunk()), o.limits(), o.timeout(),
                prefixed(out, "bulk receiver"), prefixed(err, "bulk receiver"), first::complete);
        InetSocketAddress at = receiver.address();
        out.println("bulk receiver: listening on " + at.getHostString() + ":" + at.getPort() + "; "
                + o.limits().describe() + (o.once() ? "; for one transfer" : "; Ctrl-C stops it"));
        out.flush();
        if (o.once()) {
            // the first report, or the receiver closing itself before one came
            receiver.onDispose().subscribe(null, e -> first.complete(null), () -> first.complete(null));
            ReceiveReport r = first.join();
            receiver.close();
            if (r == null) {
                err.println("bulk receiver: FAILED: the receiver closed itself before a transfer ended");
            }
            return r != null && r.succeeded() ? 0 : 1;
        }
        return ServerRun.untilStopped("bulk receiver", receiver.onDispose(), receiver::close,
                () -> out.println("bulk receiver: stopped after " + receiver.bytesConsumed() + " bytes"), err);
    }

    private static Consumer<String> prefixed(PrintStream out, String who) {
        return line -> out.println(who + ": " + line);
    }
}
