package io.reactiverdma.verbs.pingpong;

import io.reactiverdma.natives.RdmaException;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A raw-verbs ping-pong (formerly the ping sample, kept as the interop test of the native layer): an RC
 * printed. Speaks {@code ibv_rc_pingpong}'s out-of-band exchange, so either side can be that C program:
 *
 * <pre>
 *   ping demo -n 1000                       # both sides in this JVM
 *   ping server                             # then, elsewhere:  ping client SERVER_HOST
 *   ibv_rc_pingpong -g 1 -s 64              # then:             ping client HOST -g 1 --no-verify
 * </pre>
 */
public final class PingPong {
    private PingPong() {
    }

    public static void main(String[] args) {
        PingOptions options;
        try {
            options = PingOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ping: " + e.getMessage());
            System.err.println(PingOptions.USAGE);
            System.exit(2);
            return;
        }
        try {
            run(options, System.out);
        } catch (Exception e) {
            System.err.println("ping: FAILED: " + e);
            if (!(e instanceof RdmaException) && !(e instanceof TimeoutException)) {
                e.printStackTrace();
            }
            System.exit(1);
        }
    }

    /** Runs one mode; returns the client's statistics (null for a server). */
    static RoundTripStats run(PingOptions options, PrintStream out) throws Exception {
        return switch (options.mode()) {
            case SERVER -> {
                try (ServerSocket listener = new ServerSocket()) {
                    listener.setReuseAddress(true);
                    listener.bind(new InetSocketAddress(options.port()));
                    out.println("ping server: waiting for a client on TCP port " + options.port());
                    serve(options, listener, out);
                }
                yield null;
            }
            case CLIENT -> client(options, new InetSocketAddress(options.host(), options.port()), out);
            case DEMO -> demo(options, out);
        };
    }

    static void serve(PingOptions options, ServerSocket listener, PrintStream out) throws Exception {
        try (PingEndpoint endpoint = new PingEndpoint(options)) {
            endpoint.postInitialReceives();
            listener.setSoTimeout((int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(options.timeoutNs()) * 6));
            try (Socket socket = listener.accept()) {
                socket.setSoTimeout((int) TimeUnit.NANOSECONDS.toMillis(options.timeoutNs()));
                Destination remote = endpoint.exchangeAsServer(socket);
                describe(out, "ping server", endpoint, remote);
                endpoint.runServer();
                out.println("ping server: echoed " + options.iterations() + " messages of " + options.size()
                        + " bytes");
            }
        }
    }

    static RoundTripStats client(PingOptions options, InetSocketAddress server, PrintStream out) throws Exception {
        try (PingEndpoint endpoint = new PingEndpoint(options)) {
            endpoint.postInitialReceives();
            try (Socket socket = new Socket()) {
                socket.connect(server, (int) TimeUnit.NANOSECONDS.toMillis(options.timeoutNs()));
                socket.setSoTimeout((int) TimeUnit.NANOSECONDS.toMillis(options.timeoutNs()));
                Destination remote = endpoint.exchangeAsClient(socket);
                describe(out, "ping client", endpoint, remote);
            }
            RoundTripStats stats = endpoint.runClient(options.verify());
            out.println("ping client: " + options.size() + "-byte messages"
                    + (options.verify() ? ", every reply checked byte for byte" : "") + ": " + stats.summary());
            return stats;
        }
    }

    private static RoundTripStats demo(PingOptions options, PrintStream out) throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try {
                    serve(options, listener, out);
                } catch (Exception e) {
                    throw new IllegalStateException("ping server failed: " + e, e);
                }
            });
            try {
                return client(options, new InetSocketAddress(InetAddress.getLoopbackAddress(),
                        listener.getLocalPort()), out);
            } finally {
                try {
                    server.get(options.timeoutNs() * 2, TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception ex ? ex : e;
                }
            }
        }
    }

    private static void describe(PrintStream out, String who, PingEndpoint endpoint, Destination remote)
            throws IOException {
        out.printf("%s: local QPN 0x%06x PSN 0x%06x GID %s (index %d), remote QPN 0x%06x GID %s, MTU %d%n",
                who, endpoint.local().qpn(), endpoint.local().psn(), endpoint.local().gid(), endpoint.gidIndex(),
                remote.qpn(), remote.gid(), endpoint.mtu().bytes());
    }
}
