package io.reactiverdma.samples.kv;

import io.reactiverdma.samples.common.CommandLineArgs;
import io.reactiverdma.samples.common.ServerLimits;
import io.reactiverdma.samples.common.UsageException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static io.reactiverdma.samples.common.CommandLineArgs.intArg;
import static io.reactiverdma.samples.common.CommandLineArgs.requireApplies;
import static io.reactiverdma.samples.common.CommandLineArgs.stringArg;

/**
 * Command line of the key-value sample. A bad one is a {@link UsageException} saying what is wrong.
 *
 * @param mode       what to run
 * @param host       demo and server: the address to listen on (null: the local RDMA device's address);
 *                   client: the server's address
 * @param port       the rdma_cm port (demo: 0 picks a free one)
 * @param clients    demo: concurrent clients incrementing the counter
 * @param increments demo: increments per client
 * @param gets       demo: GETs timed one at a time
 * @param largeKb    demo: the size of the value streamed with download, KiB
 * @param slots      demo and server: table slots
 * @param command    client: the command and its arguments (put KEY VALUE, get KEY ...)
 * @param timeout    limit for connecting and for each operation
 * @param limits     server: the engine's server options it binds with
 */
public record KvOptions(Mode mode, String host, int port, int clients, int increments, int gets, int largeKb,
                        int slots, List<String> command, Duration timeout, ServerLimits limits) {
    public enum Mode { DEMO, SERVER, CLIENT, HELP }

    public static final int DEFAULT_PORT = 7472;
    public static final int DEFAULT_CLIENTS = 4;
    public static final int DEFAULT_INCREMENTS = 250;
    public static final int DEFAULT_GETS = 500;
    public static final int DEFAULT_LARGE_KB = 3 << 10;
    public static final long DEFAULT_TIMEOUT_MS = 30_000;
    /** The largest download chunk: one pooled buffer of the engine (its largest allocation, 4 MiB). */
    static final int MAX_DOWNLOAD_CHUNK = 4 << 20;

    static final String USAGE = String.join("\n",
            "usage: kv demo [--host H] [--port P] [--clients N] [--increments N] [--gets N] [--large-kb N]",
            "                               server and clients in this JVM, on the local RDMA device's address",
            "       kv server [--host H] [--port P] [--slots N] [server options]   a key-value server, until Ctrl-C",
            "       kv client HOST [--port P] COMMAND            one command against a server:",
            "           put KEY VALUE | get KEY | delete KEY | incr COUNTER [DELTA] | download KEY [CHUNK_BYTES]",
            "           (a command's arguments are taken as they are: put k -h stores \"-h\"; CHUNK_BYTES takes",
            "           sizes such as 64k, 1.." + MAX_DOWNLOAD_CHUNK + ")",
            "options:",
            "  --host H          address to listen on (default: the IPv4 address of the netdev of the first",
            "                    RDMA device with an ACTIVE port, from /sys/class/infiniband)",
            "  -p, --port P      rdma_cm port (default " + DEFAULT_PORT + "; demo: a free one)",
            "      --clients N   demo: clients incrementing one counter concurrently (default " + DEFAULT_CLIENTS + ")",
            "      --increments N  demo: increments per client (default " + DEFAULT_INCREMENTS + ")",
            "      --gets N      demo: GETs timed one at a time (default " + DEFAULT_GETS + ")",
            "      --large-kb N  demo: KiB of the value streamed with download (default " + DEFAULT_LARGE_KB
                    + ", at most " + (KvServerOptions.DEFAULT_MAX_VALUE_BYTES >> 10) + ")",
            "      --slots N     demo, server: table slots (default " + KvServerOptions.DEFAULT_SLOT_COUNT + ")",
            "      --timeout-ms N  limit for connecting and for each operation (default " + DEFAULT_TIMEOUT_MS + ")",
            "  -h, --help        this text",
            ServerLimits.USAGE,
            "Exit status: 0 everything verified, 1 failure (a server: also when it closed itself), 2 bad usage.");


    private static final Set<String> COMMANDS = Set.of("put", "get", "delete", "incr", "download");

    public KvOptions {
        if (mode == null) {
            throw new UsageException("missing mode");
        }
        if (mode == Mode.CLIENT && (host == null || host.isBlank())) {
            throw new UsageException("client needs the server's HOST");
        }
        command = List.copyOf(command);
        if (mode == Mode.CLIENT) {
            checkCommand(command);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new UsageException("--timeout-ms must be positive, got " + timeout);
        }
        if (limits == null) {
            limits = ServerLimits.DEFAULTS;
        }
    }

    private static void checkCommand(List<String> c) {
        if (c.isEmpty() || !COMMANDS.contains(c.get(0))) {
            throw new UsageException("client needs a command (" + String.join(", ", COMMANDS.stream().sorted().toList())
                    + "), got " + (c.isEmpty() ? "none" : "'" + c.get(0) + "'"));
        }
        int args = c.size() - 1;
        boolean ok = switch (c.get(0)) {
            case "put" -> args == 2;
            case "get", "delete" -> args == 1;
            case "incr", "download" -> args == 1 || args == 2;
            default -> false;
        };
        if (!ok) {
            throw new UsageException("wrong arguments for " + c.get(0) + ": " + c.subList(1, c.size()));
        }
        if (c.size() == 3 && c.get(0).equals("incr")) {
            try {
                Long.parseLong(c.get(2));
            } catch (NumberFormatException e) {
                throw new UsageException(c.get(0) + " needs a number, got '" + c.get(2) + "'");
            }
        }
        if (c.size() == 3 && c.get(0).equals("download")) {
            String v = c.get(2);
            long n = CommandLineArgs.parseSize("download CHUNK_BYTES", v);
            if (n < 1 || n > MAX_DOWNLOAD_CHUNK) {
                throw new UsageException("download CHUNK_BYTES must be in 1.." + MAX_DOWNLOAD_CHUNK + ", got " + v);
            }
        }
    }

    /** Arguments a client command takes: {required, optional}. */
    private static int[] arity(String command) {
        return switch (command) {
            case "put" -> new int[] {2, 0};
            case "get", "delete" -> new int[] {1, 0};
            case "incr", "download" -> new int[] {1, 1};
            default -> new int[] {0, 0};
        };
    }

    /**
     * Parses {@code args} (mode first). {@code -h} or {@code --help} where an option may stand gives
     * {@link Mode#HELP}; a client command's arguments are taken as they are (they may start with '-'), and
     * options may come before or after the command.
     */
    public static KvOptions parse(String... args) {
        if (args.length > 0 && CommandLineArgs.isHelp(args[0])) {
            return help();
        }
        Mode mode = CommandLineArgs.firstWord(args, "mode", Mode.DEMO, Mode.SERVER, Mode.CLIENT);
        String host = null;
        int port = mode == Mode.DEMO ? 0 : DEFAULT_PORT;
        int clients = DEFAULT_CLIENTS;
        int increments = DEFAULT_INCREMENTS;
        int gets = DEFAULT_GETS;
        int largeKb = DEFAULT_LARGE_KB;
        int slots = KvServerOptions.DEFAULT_SLOT_COUNT;
        long timeoutMs = DEFAULT_TIMEOUT_MS;
        ServerLimits limits = ServerLimits.DEFAULTS;
        List<String> positional = new ArrayList<>();
        Set<Mode> demo = Set.of(Mode.DEMO);
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (mode == Mode.CLIENT && positional.size() == 1 && !a.startsWith("-")) {
                // the command word: its arguments are values whatever they look like
                int[] arity = arity(a);
                positional.add(a);
                for (int k = 0; k < arity[0] && i + 1 < args.length; k++) {
                    positional.add(args[++i]);
                }
                if (arity[1] == 1 && i + 1 < args.length && !isOption(args[i + 1])) {
                    positional.add(args[++i]);
                }
                continue;
            }
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
                case "--clients" -> {
                    requireApplies(mode, demo, a, "the demo's counter clients");
                    clients = intArg(args, ++i, a, 1, 64);
                }
                case "--increments" -> {
                    requireApplies(mode, demo, a, "the demo's increments per client");
                    increments = intArg(args, ++i, a, 1, 1_000_000);
                }
                case "--gets" -> {
                    requireApplies(mode, demo, a, "the demo's timed GETs");
                    gets = intArg(args, ++i, a, 1, 10_000_000);
                }
                case "--large-kb" -> {
                    requireApplies(mode, demo, a, "the demo's streamed value");
                    largeKb = intArg(args, ++i, a, 1, KvServerOptions.DEFAULT_MAX_VALUE_BYTES >> 10);
                }
                case "--slots" -> {
                    requireApplies(mode, Set.of(Mode.DEMO, Mode.SERVER), a, "the server's table size");
                    slots = intArg(args, ++i, a, KvServerOptions.DEFAULT_MAX_PROBE, 1 << 24);
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
        List<String> command = List.of();
        if (mode == Mode.CLIENT) {
            if (positional.isEmpty()) {
                throw new UsageException("client needs the server's HOST and a command");
            }
            host = positional.get(0);
            command = positional.subList(1, positional.size());
        } else if (!positional.isEmpty()) {
            throw new UsageException("unexpected arguments " + positional);
        }
        if (command.size() == 3 && command.get(0).equals("download")) {
            checkCommand(command);
            command = List.of(command.get(0), command.get(1),
                    Long.toString(CommandLineArgs.parseSize("download CHUNK_BYTES", command.get(2))));
        }
        return new KvOptions(mode, host, port, clients, increments, gets, largeKb, slots, command,
                Duration.ofMillis(timeoutMs), limits);
    }

    private static KvOptions help() {
        return new KvOptions(Mode.HELP, null, DEFAULT_PORT, DEFAULT_CLIENTS, DEFAULT_INCREMENTS, DEFAULT_GETS,
                DEFAULT_LARGE_KB, KvServerOptions.DEFAULT_SLOT_COUNT, List.of(), Duration.ofMillis(DEFAULT_TIMEOUT_MS),
                ServerLimits.DEFAULTS);
    }

    /** An option this parser knows (a command's optional argument that looks like one is not taken as it). */
    private static boolean isOption(String a) {
        return CommandLineArgs.isHelp(a) || ServerLimits.isFlag(a) || Set.of("--host", "-p", "--port", "--clients",
                "--increments", "--gets", "--large-kb", "--slots", "--timeout-ms").contains(a);
    }
}
