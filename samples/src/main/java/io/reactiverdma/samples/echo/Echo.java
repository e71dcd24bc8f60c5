package io.reactiverdma.samples.echo;

import io.reactiverdma.samples.common.SampleMain;
import io.reactiverdma.samples.common.ServerRun;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.samples.common.DeviceAddress;

import java.util.List;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.function.Consumer;

/**
 * The echo sample's command line (see {@link EchoOptions#USAGE}):
 * <pre>
 *   echo demo -n 1000 -s 64            server and client in this JVM, on the local RDMA device's address
 *   echo server [--host H] [--port P]  an echo server, until Ctrl-C
 *   echo client HOST -n 1000 -s 64     ping-pong with a server elsewhere
 * </pre>
 * Prints the round-trip summary; exits 0 when every reply arrived and matched byte for byte, 1 on any
 * failure (the error is printed), 2 on a bad command line.
 */
public final class Echo {
    private Echo() {
    }

    public static void main(String[] args) {
        SampleMain.exit(run(args, System.out, System.err));
    }

    /** Runs the command line {@code args}; returns the exit status. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        return SampleMain.run("echo", EchoOptions.USAGE, args, err, EchoOptions::parse, List.of(RdmaException.class, EchoException.class),
                options -> {
                    switch (options.mode()) {
                        case HELP -> out.println(EchoOptions.USAGE);
                        case DEMO -> demo(options, out);
                        case SERVER -> {
                            return server(options, out, err);
                        }
                        case CLIENT -> client(options, out);
                    }
                    return 0;
                });
    }

    /** Server and client in this JVM on the device's address; returns the client's round trips. */
    static RoundTripStats demo(EchoOptions o, PrintStream out) {
        String host = listenHost(o, out, "echo demo");
        int maxSize = Math.max(o.size(), EchoOptions.DEFAULT_MAX_MESSAGE_SIZE);
        EchoServer server = EchoServer.start(host, o.port(), maxSize, o.timeout(), prefixed(out, "echo server"));
        RoundTripStats stats;
        try {
            InetSocketAddress at = server.address();
            out.println("echo server: listening on " + at.getHostString() + ":" + at.getPort());
            stats = client(o.count(), o.size(), at.getHostString(), at.getPort(), o, out);
        } finally {
            server.close(); // waits until the server side of the connection is closed too
        }
        out.println("echo server: echoed " + plural(server.messagesEchoed(), "message"));
        return stats;
    }

    /** Until Ctrl-C (0), or until the server closed itself (1). */
    private static int server(EchoOptions o, PrintStream out, PrintStream err) {
        String host = listenHost(o, out, "echo server");
        EchoServer server = EchoServer.start(host, o.port(), o.maxMessageSize(), o.limits(), o.timeout(),
                prefixed(out, "echo server"));
        InetSocketAddress at = server.address();
        out.println("echo server: listening on " + at.getHostString() + ":" + at.getPort() + ", messages up to "
                + o.maxMessageSize() + " bytes; " + o.limits().describe() + "; Ctrl-C stops it");
        return ServerRun.untilStopped("echo server", server.onDispose(), server::close,
                () -> out.println("echo server: stopped after echoing " + server.messagesEchoed() + " messages"), err);
    }

    private static void client(EchoOptions o, PrintStream out) {
        client(o.count(), o.size(), o.host(), o.port(), o, out);
    }

    private static RoundTripStats client(int count, int size, String host, int port, EchoOptions o,
            PrintStream out) {
        RoundTripStats stats = EchoClient.run(host, port, count, size, o.timeout(), prefixed(out, "echo client"));
        out.println("echo client: " + plural(count, "message") + " of " + plural(size, "byte")
                + ", one at a time: " + (count == 1 ? "the reply" : "all " + stats.count() + " replies")
                + " verified byte for byte");
        out.println("echo client: " + stats.summary());
        return stats;
    }

    private static String listenHost(EchoOptions o, PrintStream out, String who) {
        return DeviceAddress.hostOrFind(o.host(), prefixed(out, who));
    }

    private static String plural(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    private static Consumer<String> prefixed(PrintStream out, String who) {
        return line -> out.println(who + ": " + line);
    }
}
