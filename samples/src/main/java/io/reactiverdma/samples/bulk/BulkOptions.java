package io.reactiverdma.samples.bulk;

import io.reactiverdma.samples.common.CommandLineArgs;
import io.reactiverdma.samples.common.ServerLimits;
import io.reactiverdma.samples.common.UsageException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static io.reactiverdma.samples.common.CommandLineArgs.intArg;
import static io.reactiverdma.samples.common.CommandLineArgs.requireApplies;
import static io.reactiverdma.samples.common.CommandLineArgs.sizeArg;
import static io.reactiverdma.samples.common.CommandLineArgs.stringArg;

/**
 * Command line of the bulk-transfer sample. A bad one is a {@link UsageException} naming the bad option.
 *
 * @param command       what to run
 * @param host          demo and receive: the address to listen on (null: the local RDMA device's address);
 *                      send: the receiver's address
 * @param port          the rdma_cm port (demo: 0 picks a free one)
 * @param mode          push (the sender WRITEs) or pull (the receiver READs)
 * @param size          demo and send without a file: bytes of the generated stream
 * @param file          demo and send: the file to send (null: the generated stream)
 * @param out           demo and receive: the file to write what arrives to (null: hash and discard)
 * @param chunkSize     bytes per chunk
 * @param window        chunks in flight at most
 * @param timeout       limit for connecting, and for a transfer that makes no progress
 * @param delayPerChunk receive: a pause before consuming each chunk (shows backpressure); zero: none
 * @param once          receive: exit after one transfer, with its status
 * @param limits        receive: the engine's server options the receiver binds with
 */
public record BulkOptions(Command command, String host, int port, TransferMode mode, long size, Path file, Path out,
                          int chunkSize, int window, Duration timeout, Duration delayPerChunk, boolean once,
                          ServerLimits limits) {
    public enum Command { DEMO, RECEIVE, SEND, HELP }

    public static final int DEFAULT_PORT = 7472;
    public static final long DEFAULT_SIZE = 1L << 30;
    public static final int DEFAULT_CHUNK_SIZE = 1 << 20;
    public static final int DEFAULT_WINDOW = 8;
    /** A chunk is one pooled buffer on the side that does not expose it: at most the pool's 4 MiB. */
    public static final int MAX_CHUNK_SIZE = 4 << 20;
    public static final int MAX_WINDOW = 64;
    /** The most registered memory one transfer's ring (chunk size x window) may take. */
    public static final long MAX_RING_BYTES = 64L << 20;
    public static final long DEFAULT_TIMEOUT_MS = 30_000;

    static final String USAGE = String.join("\n",
            "usage: bulk demo [--mode push|pull] [--size N | --file PATH] [--out FILE] [--chunk N] [--window N]",
            "                 receiver and sender in this JVM, on the local RDMA device's address",
            "       bulk receive [--host H] [--port P] [--out FILE] [--once] [--delay-ms N] [server options]",
            "                 a receiver: takes transfers until Ctrl-C (or one, with --once)",
            "       bulk send HOST [--port P] [--mode push|pull] [--size N | --file PATH] [--chunk N] [--window N]",
            "                 send a file or a generated stream to a receiver",
            "options:",
            "  --mode push|pull  push: the sender RDMA-WRITEs into chunks the receiver advertises; pull: the",
            "                    receiver RDMA-READs chunks the sender exposes (default push)",
            "  --size N          bytes of the generated stream, for example 4096, 64k, 100m, 1g (default 1g)",
            "  --file PATH       send this file instead of a generated stream",
            "  --out FILE        write what arrives to FILE (default: hash it and discard it); one transfer at a",
            "                    time: another that arrives while one writes FILE is refused as busy",
            "  --chunk N         bytes per chunk, 1.." + (MAX_CHUNK_SIZE >> 20) + "m (default "
                    + (DEFAULT_CHUNK_SIZE >> 20) + "m)",
            "  --window N        chunks in flight at most, 1.." + MAX_WINDOW + " (default " + DEFAULT_WINDOW
                    + "); chunk x window at most " + (MAX_RING_BYTES >> 20) + "m",
            "  --host H          address to listen on (default: the IPv4 address of the netdev of the first",
            "                    RDMA device with an ACTIVE port, from /sys/class/infiniband)",
            "  -p, --port P      rdma_cm port (default " + DEFAULT_PORT + "; demo: a free one)",
            "  --timeout-ms N    limit for connecting, and for a transfer that makes no progress (default "
                    + DEFAULT_TIMEOUT_MS + ")",
            "  --delay-ms N      receive: pause N ms before consuming each chunk (to watch backpressure)",
            "  --once            receive: exit after one transfer, with its status",
            "  -h, --help        this text",
            ServerLimits.USAGE,
            "Both ends print the bytes and the SHA-256; the sender prints whether they match. Progress goes to",
            "stderr at most once a second. Exit status: 0 hashes match, 1 failure or mismatch (receive: also when the",
            "receiver closed itself), 2 bad usage.");

    public BulkOptions {
        if (command == null) {
            throw new UsageException("missing command");
        }
        if (command == Command.SEND && (host == null || host.isBlank())) {
            throw new UsageException("send needs the receiver's HOST");
        }
        if (mode == null) {
            throw new UsageException("--mode must be push or pull");
        }
        if (size < 0) {
            throw new UsageException("--size must be >= 0, got " + size);
        }
        if (port < (command == Command.SEND ? 1 : 0) || port > 65535) {
            throw new UsageException("--port must be in " + (command == Command.SEND ? 1 : 0) + "..65535, got " + port);
        }
        if (chunkSize < 1 || chunkSize > MAX_CHUNK_SIZE) {
            throw new UsageException("--chunk must be in 1.." + MAX_CHUNK_SIZE + ", got " + chunkSize);
        }
        if (window < 1 || window > MAX_WINDOW) {
            throw new UsageException("--window must be in 1.." + MAX_WINDOW + ", got " + window);
        }
        if ((long) chunkSize * window > MAX_RING_BYTES) {
            throw new UsageException("--chunk x --window must be at most " + MAX_RING_BYTES + " bytes, got "
                    + chunkSize + " x " + window);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new UsageException("--timeout-ms must be positive, got " + timeout);
        }
        if (delayPerChunk == null || delayPerChunk.isNegative()) {
            throw new UsageException("--delay-ms must be >= 0, got " + delayPerChunk);
        }
        if (limits == null) {
            limits = ServerLimits.DEFAULTS;
        }
    }

    /** Parses {@code args} (command first); {@code -h} or {@code --help} where an option may stand gives {@link Command#HELP}. */
    public static BulkOptions parse(String... args) {
        if (args.length > 0 && CommandLineArgs.isHelp(args[0])) {
            return help();
        }
        Command command = CommandLineArgs.firstWord(args, "command", Command.DEMO, Command.RECEIVE, Command.SEND);
        Set<Command> senders = Set.of(Command.DEMO, Command.SEND);
        Set<Command> receivers = Set.of(Command.DEMO, Command.RECEIVE);
        String host = null;
        int port = command == Command.DEMO ? 0 : DEFAULT_PORT;
        TransferMode mode = TransferMode.PUSH;
        Long size = null;
        Path file = null;
        Path out = null;
        int chunk = DEFAULT_CHUNK_SIZE;
        int window = DEFAULT_WINDOW;
        long timeoutMs = DEFAULT_TIMEOUT_MS;
        long delayMs = 0;
        boolean once = false;
        ServerLimits limits = ServerLimits.DEFAULTS;
        List<String> positional = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (ServerLimits.isFlag(a)) {
                requireApplies(command, Set.of(Command.RECEIVE), a, "it is a receiver's server option");
                limits = limits.parse(args, i++);
                continue;
            }
            switch (a) {
                case "-h", "--help" -> {
                    return help();
                }
                case "--host" -> {
                    requireApplies(command, receivers, a, "send takes the receiver's address as HOST");
                    host = stringArg(args, ++i, a);
                }
                case "-p", "--port" -> port = intArg(args, ++i, a, command == Command.SEND ? 1 : 0, 65535);
                case "--mode" -> {
                    requireApplies(command, senders, a, "the sender picks the mode");
                    String m = stringArg(args, ++i, a);
                    mode = switch (m.toLowerCase(Locale.ROOT)) {
                        case "push" -> TransferMode.PUSH;
                        case "pull" -> TransferMode.PULL;
                        default -> throw new UsageException("--mode must be push or pull, got '" + m + "'");
                    };
                }
                case "--size" -> {
                    requireApplies(command, senders, a, "the sender says how much it sends");
                    size = sizeArg(args, ++i, a, 0, Long.MAX_VALUE);
                }
                case "--file" -> {
                    requireApplies(command, senders, a, "use --out for where the receiver writes");
                    file = Path.of(stringArg(args, ++i, a));
                }
                case "--out" -> {
                    requireApplies(command, receivers, a, "the receiver writes the file; use --file for what to send");
                    out = Path.of(stringArg(args, ++i, a));
                }
                case "--chunk" -> {
                    requireApplies(command, senders, a, "the sender picks the chunk size");
                    chunk = (int) sizeArg(args, ++i, a, 1, MAX_CHUNK_SIZE);
                }
                case "--window" -> {
                    requireApplies(command, senders, a, "the sender picks the window");
                    window = intArg(args, ++i, a, 1, MAX_WINDOW);
                }
                case "--timeout-ms" -> timeoutMs = intArg(args, ++i, a, 1, Integer.MAX_VALUE);
                case "--delay-ms" -> {
                    requireApplies(command, Set.of(Command.RECEIVE), a, "it slows a receiver down");
                    delayMs = intArg(args, ++i, a, 0, Integer.MAX_VALUE);
                }
                case "--once" -> {
                    requireApplies(command, Set.of(Command.RECEIVE), a, "demo and send do one transfer anyway");
                    once = true;
                }
                default -> {
                    if (a.startsWith("-")) {
                        throw new UsageException("unknown option " + a);
                    }
                    positional.add(a);
                }
            }
        }
        if (file != null && size != null) {
            throw new UsageException("--file and --size exclude each other (a file's size is its own)");
        }
        if (command == Command.SEND) {
            if (positional.size() != 1) {
                throw new UsageException("send needs exactly one HOST (the receiver's address), got "
                        + (positional.isEmpty() ? "none" : positional));
            }
            host = positional.get(0);
        } else if (!positional.isEmpty()) {
            throw new UsageException("unexpected arguments " + positional);
        }
        return new BulkOptions(command, host, port, mode, size != null ? size : DEFAULT_SIZE, file, out, chunk,
                window, Duration.ofMillis(timeoutMs), Duration.ofMillis(delayMs), once, limits);
    }

    private static BulkOptions help() {
        return new BulkOptions(Command.HELP, null, DEFAULT_PORT, TransferMode.PUSH, DEFAULT_SIZE, null, null,
                DEFAULT_CHUNK_SIZE, DEFAULT_WINDOW, Duration.ofMillis(DEFAULT_TIMEOUT_MS), Duration.ZERO, false,
                ServerLimits.DEFAULTS);
    }

    /**
     * Why a receiver refuses a transfer with these parameters (they come from the peer), or null when it
     * takes it.
     */
    static String refusal(int chunkSize, int window, long totalBytes) {
        if (chunkSize < 1 || chunkSize > MAX_CHUNK_SIZE) {
            return "chunk size " + chunkSize + " is not in 1.." + MAX_CHUNK_SIZE;
        }
        if (window < 1 || window > MAX_WINDOW) {
            return "window " + window + " is not in 1.." + MAX_WINDOW;
        }
        if ((long) chunkSize * window > MAX_RING_BYTES) {
            return "chunk size x window " + (long) chunkSize * window + " is above " + MAX_RING_BYTES + " bytes";
        }
        if (totalBytes < 0) {
            return "negative size " + totalBytes;
        }
        return null;
    }

    /** @throws IllegalArgumentException when a receiver would refuse this chunk size and window */
    static void checkChunking(int chunkSize, int window) {
        String why = refusal(chunkSize, window, 0);
        if (why != null) {
            throw new IllegalArgumentException(why);
        }
    }
}
