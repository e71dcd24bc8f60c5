package io.reactiverdma.samples.echo;

import io.reactiverdma.samples.common.CommandLineArgs;
import io.reactiverdma.samples.common.ServerLimits;
import io.reactiverdma.samples.common.UsageException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static io.reactiverdma.samples.common.CommandLineArgs.intArg;
import static io.reactiverdma.samples.common.CommandLineArgs.requireApplies;
import static io.reactiverdma.samples.common.CommandLineArgs.sizeArg;
import static io.reactiverdma.samples.common.CommandLineArgs.stringArg;

/**
 * Command line of the echo sample. A bad one is a {@link UsageException} saying what is wrong.
 *
 * @param mode           what to run
 * @param host           demo and server: the address to listen on (null: the local RDMA device's address);
 *                       client: the server's address
 * @param port           the rdma_cm port (demo: 0 picks a free one)
 * @param count          client and demo: messages to ping-pong
 * @param size           client and demo: bytes per message
 * @param maxMessageSize server: the largest message it accepts (its receive buffer size)
 * @param timeout        limit for connecting and for each reply
 * @param limits         server: the engine's server options it binds with
 */
public record EchoOptions(Mode mode, String host, int port, int count, int size, int maxMessageSize,
                          Duration timeout, ServerLimits limits) {
    public enum Mode { DEMO, SERVER, CLIENT, HELP }

    /** The default rdma_cm port of server and client (the API's {@code RdmaTransportConfig.DEFAULT_PORT}). */
    public static final int DEFAULT_PORT = 7471;
    public static final int DEFAULT_COUNT = 1000;
    public static final int DEFAULT_SIZE = 64;
    /** The API's default receive buffer size: what a server accepts unless told otherwise. */
    public static final int DEFAULT_MAX_MESSAGE_SIZE = 4096;
    public static final int MAX_SIZE = 1 << 20;
    public static final long DEFAULT_TIMEOUT_MS = 10_000;

    static final String USAGE = String.join("\n",
            "usage: echo demo [--host H] [--port P] [-n N] [-s SIZE]   server and client in this JVM, on the",
            "                                                         local RDMA device's address",
            "       echo server [--host H] [--port P] [--max-size N]  echo every message of every client",
            "       echo client HOST [--port P] [-n N] [-s SIZE]       ping-pong N messages with a server",
            "options:",
            "  --host H          address to listen on (default: the IPv4 address of the netdev of the first",
            "                    RDMA device with an ACTIVE port, from /sys/class/infiniband)",
            "  -p, --port P      rdma_cm port (default " + DEFAULT_PORT + "; demo: a free one)",
            "  -n, --count N     messages, sent one at a time, each after the previous reply (default "
                    + DEFAULT_COUNT + ")",
            "  -s, --size N      bytes per message, 1.." + MAX_SIZE + ", sizes such as 64k accepted (default "
                    + DEFAULT_SIZE + ")",
            "      --max-size N  server: the largest message accepted, 1.." + MAX_SIZE + " (default "
                    + DEFAULT_MAX_MESSAGE_SIZE + ")",
            "      --timeout-ms N  limit for connecting and for each reply (default " + DEFAULT_TIMEOUT_MS + ")",
            "  -h, --help        this text",
            ServerLimits.USAGE,
            "Every reply is checked byte for byte. Exit status: 0 all replies verified, 1 failure (the server: also",
            "when it closed itself), 2 bad usage.");

    public EchoOptions {
        if (mode == null) {
            throw new UsageException("missing mode");
        }
        if (mode == Mode.CLIENT && (host == null || host.isBlank())) {
            throw new UsageException("client needs the server's HOST");
        }
        check("--port", port, mode == Mode.CLIENT ? 1 : 0, 65535);
        check("--count", count, 1, 100_000_000);
        check("--size", size, 1, MAX_SIZE);
        check("--max-size", maxMessageSize, 1, MAX_SIZE);
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new UsageException("--timeout-ms must be positive, got " + timeout);
        }
        if (limits == null) {
            limits = ServerLimits.DEFAULTS;
        }
    }

    private static void check(String flag, long value, long min, long max) {
        if (value < min || value > max) {
            throw new UsageException(flag + " must be in " + min + ".." + max + ", got " + value);
        }
    }

    /** Parses {@code args} (mode first); {@code -h} or {@code --help} where an option may stand gives {@link Mode#HELP}. */
    public static EchoOptions parse(String... args) {
        if (args.length > 0 && CommandLineArgs.isHelp(args[0])) {
            return help();
        }
        Mode mode = CommandLineArgs.firstWord(args, "mode", Mode.DEMO, Mode.SERVER, Mode.CLIENT);
        String host = null;
        int port = mode == Mode.DEMO ? 0 : DEFAULT_PORT;
        int count = DEFAULT_COUNT;
        int size = DEFAULT_SIZE;
        int maxSize = DEFAULT_MAX_MESSAGE_SIZE;
        long timeoutMs = DEFAULT_TIMEOUT_MS;
        ServerLimits limits = ServerLimits.DEFAULTS;
        List<String> positional = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (ServerLimits.isFlag(a)) {
                requireApplies(mode, Set.of(Mode.SERVER), a, "it is a server option");
                limits = limits.parse(args, i++);
                continue;
            }
            switch (a) {
                case "-h", "--help" -> {
                    return help();
                }
                case "--host" -> {
                    requireApplies(mode, Set.of(Mode.DEMO, Mode.SERVER), a, "the client takes the server's address as HOST");
                    host = stringArg(args, ++i, a);
                }
                case "-p", "--port" -> port = intArg(args, ++i, a, mode == Mode.CLIENT ? 1 : 0, 65535);
                case "-n", "--count" -> {
                    requireApplies(mode, Set.of(Mode.DEMO, Mode.CLIENT), a, "the server echoes whatever comes");
                    count = intArg(args, ++i, a, 1, 100_000_000);
                }
                case "-s", "--size" -> {
                    requireApplies(mode, Set.of(Mode.DEMO, Mode.CLIENT), a, "use --max-size for the largest message accepted");
                    size = (int) sizeArg(args, ++i, a, 1, MAX_SIZE);
                }
                case "--max-size" -> {
                    requireApplies(mode, Set.of(Mode.SERVER), a, "-s sets the message size");
                    maxSize = (int) sizeArg(args, ++i, a, 1, MAX_SIZE);
                }
                case "--timeout-ms" -> timeoutMs = intArg(args, ++i, a, 1, Integer.MAX_VALUE);
                default -> {
                    if (a.startsWith("-")) {
                        throw new UsageException("unknown option " + a);
                    }
                    positional.add(a);
                }
            }
        }
        if (mode == Mode.CLIENT) {
            if (positional.size() != 1) {
                throw new UsageException("client needs exactly one HOST (the server's address), got "
                        + (positional.isEmpty() ? "none" : positional));
            }
            host = positional.get(0);
        } else if (!positional.isEmpty()) {
            throw new UsageException("unexpected arguments " + positional);
        }
        return new EchoOptions(mode, host, port, count, size, maxSize, Duration.ofMillis(timeoutMs), limits);
    }

    private static EchoOptions help() {
        return new EchoOptions(Mode.HELP, null, DEFAULT_PORT, DEFAULT_COUNT, DEFAULT_SIZE, DEFAULT_MAX_MESSAGE_SIZE,
                Duration.ofMillis(DEFAULT_TIMEOUT_MS), ServerLimits.DEFAULTS);
    }
}
