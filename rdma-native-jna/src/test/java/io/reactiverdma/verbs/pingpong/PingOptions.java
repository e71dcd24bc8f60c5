package io.reactiverdma.verbs.pingpong;

import io.reactiverdma.verbs.Mtu;

import java.util.ArrayList;
import java.util.List;

/**
 * Command line of the raw-verbs ping-pong (PingPong). Flags follow {@code ibv_rc_pingpong} where it has one
 * ({@code -d -g -s -n -p -r -m}).
 */
record PingOptions(Mode mode, String host, int port, String device, int gidIndex, int size, int iterations,
                   int rxDepth, Mtu mtu, int rnrRetry, long timeoutNs, boolean verify) {
    enum Mode { SERVER, CLIENT, DEMO }

    static final String USAGE = String.join("\n",
            "usage: ping server [options]            wait for one client, echo its messages",
            "       ping client HOST [options]       connect to a server (this sample or ibv_rc_pingpong)",
            "       ping demo [options]              server and client in this JVM, over the RDMA device",
            "options:",
            "  -p, --port N        TCP port of the QP-info exchange (default 18515, as ibv_rc_pingpong)",
            "  -d, --ib-dev NAME   RDMA device (default: first)",
            "  -g, --gid-idx N     GID index (default: the RoCEv2 IPv4 GID, else 0)",
            "  -s, --size N        message size in bytes (default 64)",
            "  -n, --iters N       number of round trips (default 1000)",
            "  -r, --rx-depth N    receives kept posted (default 64)",
            "  -m, --mtu N         path MTU 256..4096 (default: the port's active MTU)",
            "      --rnr-retry N   RNR retries 0..6 (default 6; 7 = forever is refused)",
            "      --timeout-ms N  give up when a completion takes longer (default 10000)",
            "      --no-verify     do not check that replies echo the message (for ibv_rc_pingpong servers)");

    static PingOptions parse(String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("missing mode (server, client or demo)");
        }
        Mode mode = switch (args[0]) {
            case "server" -> Mode.SERVER;
            case "client" -> Mode.CLIENT;
            case "demo" -> Mode.DEMO;
            default -> throw new IllegalArgumentException("unknown mode '" + args[0] + "' (server, client or demo)");
        };
        String host = null;
        int port = 18515;
        String device = null;
        int gid = -1;
        int size = 64;
        int iters = 1000;
        int rxDepth = 64;
        Mtu mtu = null;
        int rnrRetry = 6;
        long timeoutMs = 10_000;
        boolean verify = true;
        List<String> positional = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-p", "--port" -> port = intArg(args, ++i, a, 1, 65535);
                case "-d", "--ib-dev" -> device = stringArg(args, ++i, a);
                case "-g", "--gid-idx" -> gid = intArg(args, ++i, a, 0, 1 << 16);
                case "-s", "--size" -> size = intArg(args, ++i, a, 1, 1 << 20);
                case "-n", "--iters" -> iters = intArg(args, ++i, a, 1, 100_000_000);
                case "-r", "--rx-depth" -> rxDepth = intArg(args, ++i, a, 1, 4096);
                case "-m", "--mtu" -> mtu = mtu(intArg(args, ++i, a, 256, 4096));
                case "--rnr-retry" -> rnrRetry = intArg(args, ++i, a, 0, 6);
                case "--timeout-ms" -> timeoutMs = intArg(args, ++i, a, 1, Integer.MAX_VALUE);
                case "--no-verify" -> verify = false;
                default -> {
                    if (a.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option " + a);
                    }
                    positional.add(a);
                }
            }
        }
        if (mode == Mode.CLIENT) {
            if (positional.size() != 1) {
                throw new IllegalArgumentException("client needs exactly one HOST, got " + positional);
            }
            host = positional.get(0);
        } else if (!positional.isEmpty()) {
            throw new IllegalArgumentException("unexpected arguments " + positional);
        }
        return new PingOptions(mode, host, port, device, gid, size, iters, rxDepth, mtu, rnrRetry,
                timeoutMs * 1_000_000L, verify);
    }

    private static String stringArg(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    private static int intArg(String[] args, int i, String flag, int min, int max) {
        String v = stringArg(args, i, flag);
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " needs a number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(flag + " must be in " + min + ".." + max + ", got " + n);
        }
        return n;
    }

    private static Mtu mtu(int bytes) {
        for (Mtu m : Mtu.values()) {
            if (m.bytes() == bytes) {
                return m;
            }
        }
        throw new IllegalArgumentException("--mtu must be 256, 512, 1024, 2048 or 4096, got " + bytes);
    }
}
