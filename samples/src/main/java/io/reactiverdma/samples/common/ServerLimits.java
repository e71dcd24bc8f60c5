package io.reactiverdma.samples.common;

import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * The engine's server options a sample server (echo, key-value, bulk) takes from its command line and binds
 * with: the API's {@code RdmaOption}s of the same names (docs/server-guide.md says what each does).
 *
 * @param sharedReceiveQueueDepth {@code SHARED_RECEIVE_QUEUE_DEPTH}: 0 for a receive queue per connection
 * @param maxConnections          {@code MAX_CONNECTIONS}
 * @param acceptTimeout           {@code ACCEPT_TIMEOUT}
 * @param idleProbeInterval       {@code IDLE_PROBE_INTERVAL}: ZERO turns idle peer detection off
 */
public record ServerLimits(int sharedReceiveQueueDepth, int maxConnections, Duration acceptTimeout,
                           Duration idleProbeInterval) {
    /** The engine's defaults. */
    public static final ServerLimits DEFAULTS = new ServerLimits(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH.defaultValue(),
            RdmaOption.MAX_CONNECTIONS.defaultValue(), RdmaOption.ACCEPT_TIMEOUT.defaultValue(),
            RdmaOption.IDLE_PROBE_INTERVAL.defaultValue());

    /** The flags {@link #parse} reads, for the usage text. */
    public static final String USAGE = String.join("\n",
            "server options (the engine's, see docs/server-guide.md):",
            "      --shared-receive-queue-depth N  every connection receives from one shared receive queue of N",
            "                    buffers (0.." + (1 << 20) + "; default 0: a receive queue per connection)",
            "      --max-connections N  connections beyond N are rejected (1..2147483647; default unlimited)",
            "      --accept-timeout-ms N  limit for accepting a request, and on a shared receive queue for the",
            "                    client's hello after the accept (default "
                    + RdmaOption.ACCEPT_TIMEOUT.defaultValue().toMillis() + ")",
            "      --idle-probe-interval-ms N  probe a connection idle this long, close it when the probe fails",
            "                    (0: off; default " + RdmaOption.IDLE_PROBE_INTERVAL.defaultValue().toMillis() + ")");

    private static final Set<String> FLAGS = Set.of("--shared-receive-queue-depth", "--max-connections",
            "--accept-timeout-ms", "--idle-probe-interval-ms");

    public ServerLimits {
        Objects.requireNonNull(acceptTimeout, "acceptTimeout");
        Objects.requireNonNull(idleProbeInterval, "idleProbeInterval");
    }

    /** True when {@code flag} is one of the options {@link #parse} reads. */
    public static boolean isFlag(String flag) {
        return FLAGS.contains(flag);
    }

    /**
     * This with the option {@code args[i]} (one of {@link #isFlag}) set from its value {@code args[i + 1]}; a
     * {@link UsageException} naming the flag when the value is missing or out of the option's range.
     */
    public ServerLimits parse(String[] args, int i) {
        String flag = args[i];
        return switch (flag) {
            case "--shared-receive-queue-depth" -> new ServerLimits(
                    CommandLineArgs.intArg(args, i + 1, flag, 0, 1 << 20), maxConnections, acceptTimeout,
                    idleProbeInterval);
            case "--max-connections" -> new ServerLimits(sharedReceiveQueueDepth,
                    CommandLineArgs.intArg(args, i + 1, flag, 1, Integer.MAX_VALUE), acceptTimeout, idleProbeInterval);
            case "--accept-timeout-ms" -> new ServerLimits(sharedReceiveQueueDepth, maxConnections,
                    Duration.ofMillis(CommandLineArgs.longArg(args, i + 1, flag, 1, Integer.MAX_VALUE)),
                    idleProbeInterval);
            case "--idle-probe-interval-ms" -> new ServerLimits(sharedReceiveQueueDepth, maxConnections, acceptTimeout,
                    Duration.ofMillis(CommandLineArgs.longArg(args, i + 1, flag, 0, Integer.MAX_VALUE)));
            default -> throw new IllegalArgumentException("not a server option: " + flag);
        };
    }

    /** {@code server} with these options. */
    public RdmaServer applyTo(RdmaServer server) {
        return server.option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, sharedReceiveQueueDepth)
                .option(RdmaOption.MAX_CONNECTIONS, maxConnections)
                .option(RdmaOption.ACCEPT_TIMEOUT, acceptTimeout)
                .option(RdmaOption.IDLE_PROBE_INTERVAL, idleProbeInterval);
    }

    /** One line for the start-up banner: what the server chose. */
    public String describe() {
        return "shared receive queue " + (sharedReceiveQueueDepth == 0 ? "off" : sharedReceiveQueueDepth + " buffers")
                + ", max connections " + (maxConnections == Integer.MAX_VALUE ? "unlimited" : maxConnections)
                + ", accept timeout " + acceptTimeout.toMillis() + " ms, idle probe "
                + (idleProbeInterval.isZero() ? "off" : "after " + idleProbeInterval.toMillis() + " ms");
    }
}
