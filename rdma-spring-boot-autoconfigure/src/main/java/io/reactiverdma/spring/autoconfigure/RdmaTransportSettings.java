package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RdmaTransport;
import io.reactiverdma.reactive.RdmaTransportConfig;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.unit.DataSize;

import java.time.Duration;
import java.util.Map;

/**
 * Turns {@link RdmaProperties} into a client, server or datagram configuration, with the API's own checks: a value it
 * refuses becomes an {@link InvalidConfigurationPropertyValueException} naming the property (Spring Boot's
 * failure analysis prints it as "Invalid value ... for configuration property ...").
 */
final class RdmaTransportSettings {
    private final String prefix;
    private RdmaTransportConfig config = RdmaTransportConfig.defaults();

    private RdmaTransportSettings(String prefix) {
        this.prefix = prefix;
    }

    /** The client properties applied to {@code client} (host only when set). */
    static RdmaClient configure(RdmaClient client, RdmaProperties.Client properties) {
        RdmaTransportSettings s = new RdmaTransportSettings(RdmaProperties.PREFIX + ".client");
        if (properties.getPort() == 0) {
            // The API takes 0 (a server's "any free port"); a client cannot connect to port 0.
            throw s.invalid("port", 0, "a client connects to a server's port: 1..65535, got 0");
        }
        s.address(properties.getHost(), properties.getPort());
        s.transport(properties);
        s.option("connect-timeout", RdmaOption.CONNECT_TIMEOUT, properties.getConnectTimeout());
        s.option("type-of-service", RdmaOption.TYPE_OF_SERVICE, properties.getTypeOfService());
        if (properties.getLocalAddress() != null) {
            s.option("local-address", RdmaOption.LOCAL_ADDRESS, properties.getLocalAddress());
        }
        return configure(client, s.config);
    }

    /**
     * The server properties under {@code prefix} ({@code reactive-rdma.server}, {@code reactive-rdma.rsocket.server})
     * applied to {@code server}; the host is required.
     */
    static RdmaServer configure(RdmaServer server, RdmaProperties.Listener properties, String prefix) {
        RdmaTransportSettings s = new RdmaTransportSettings(prefix);
        if (properties.getHost() == null) {
            throw s.invalid("host", null, "a server needs the address to listen on: an address of an RDMA "
                    + "device's netdev");
        }
        s.address(properties.getHost(), properties.getPort());
        s.transport(properties);
        s.option("max-connections", RdmaOption.MAX_CONNECTIONS, properties.getMaxConnections());
        s.option("accept-timeout", RdmaOption.ACCEPT_TIMEOUT, properties.getAcceptTimeout());
        s.option("shared-receive-queue-depth", RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH,
                properties.getSharedReceiveQueueDepth());
        s.option("shared-receive-queue-group", RdmaOption.SHARED_RECEIVE_QUEUE_GROUP,
                properties.getSharedReceiveQueueGroup());
        return configure(server, s.config);
    }

    /** The datagram properties applied to {@code datagram} (host only when set). */
    static RdmaDatagram configure(RdmaDatagram datagram, RdmaProperties.Datagram properties) {
        RdmaTransportSettings s = new RdmaTransportSettings(RdmaProperties.PREFIX + ".datagram");
        s.address(properties.getHost(), properties.getPort());
        s.endpoint(properties);
        s.option("connect-timeout", RdmaOption.CONNECT_TIMEOUT, properties.getConnectTimeout());
        s.option("address-handles", RdmaOption.DATAGRAM_ADDRESS_HANDLES, properties.getAddressHandles());
        s.option("peer-refresh", RdmaOption.DATAGRAM_PEER_REFRESH, properties.getPeerRefresh());
        return configure(datagram, s.config);
    }

    /**
     * {@code d} when positive, else an {@link InvalidConfigurationPropertyValueException} naming
     * {@code prefix.property} and saying {@code what} it bounds.
     */
    static Duration positive(String prefix, String property, Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new InvalidConfigurationPropertyValueException(prefix + "." + property, d,
                    "must be a positive duration (" + what + ")");
        }
        return d;
    }

    /**
     * {@code c}'s host (when set), port and options applied to {@code target}: the one place that does it, for
     * every role through the API's shared transport base.
     */
    private static <B extends RdmaTransport<B, ?>> B configure(B target, RdmaTransportConfig c) {
        B configured = c.host() != null ? target.host(c.host()) : target;
        configured = configured.port(c.port());
        for (Map.Entry<RdmaOption<?>, Object> e : c.options().entrySet()) {
            configured = withOption(configured, e.getKey(), e.getValue());
        }
        return configured;
    }

    private static <B extends RdmaTransport<B, ?>, T> B withOption(B target, RdmaOption<T> option, Object value) {
        return target.option(option, option.type().cast(value));
    }

    private void address(String host, int port) {
        if (host != null) {
            try {
                config = config.withHost(host);
            } catch (InvalidRequestException e) {
                throw invalid("host", host, e.getMessage());
            }
        }
        try {
            config = config.withPort(port);
        } catch (InvalidRequestException e) {
            throw invalid("port", port, e.getMessage());
        }
    }

    /** What every role has: queue depths, poll batch, CQ mode and idle strategy. */
    private void endpoint(RdmaProperties.Endpoint e) {
        option("send-queue-depth", RdmaOption.SEND_QUEUE_DEPTH, e.getSendQueueDepth());
        option("receive-queue-depth", RdmaOption.RECEIVE_QUEUE_DEPTH, e.getReceiveQueueDepth());
        option("poll-batch-size", RdmaOption.POLL_BATCH_SIZE, e.getPollBatchSize());
        option("completion-queue-mode", RdmaOption.COMPLETION_QUEUE_MODE, e.getCompletionQueueMode());
        option("idle-strategy", RdmaOption.IDLE_STRATEGY, idleStrategy(e.getIdleStrategy(), e.getBackoff(),
                e.getEventDrivenSpinPolls()));
    }

    /** What a client and a server have beyond the endpoint's. */
    private void transport(RdmaProperties.Transport t) {
        endpoint(t);
        option("receive-buffer-size", RdmaOption.RECEIVE_BUFFER_SIZE, bytes("receive-buffer-size", t.getReceiveBufferSize()));
        option("max-inline-data", RdmaOption.MAX_INLINE_DATA, bytes("max-inline-data", t.getMaxInlineData()));
        option("credit-flow-control", RdmaOption.CREDIT_FLOW_CONTROL, t.isCreditFlowControl());
        option("read-atomic-depth", RdmaOption.READ_ATOMIC_DEPTH, t.getReadAtomicDepth());
        option("rnr-retry-count", RdmaOption.RNR_RETRY_COUNT, t.getRnrRetryCount());
        if (t.getMinRnrTimer() != null) { // unset: the engine's default, which depends on the shared receive queue
            option("min-rnr-timer", RdmaOption.MIN_RNR_TIMER, t.getMinRnrTimer());
        }
        minRnrDelay(t.getMinRnrDelay(), t.getMinRnrTimer());
        option("retry-count", RdmaOption.RETRY_COUNT, t.getRetryCount());
        option("ack-timeout-exponent", RdmaOption.ACK_TIMEOUT, t.getAckTimeoutExponent());
        option("signal-interval", RdmaOption.SIGNAL_INTERVAL, t.getSignalInterval());
        option("completion-vector", RdmaOption.COMPLETION_VECTOR, t.getCompletionVector());
        option("idle-probe-interval", RdmaOption.IDLE_PROBE_INTERVAL, t.getIdleProbeInterval());
    }

    /** min-rnr-delay, when set, as its IBA code; with min-rnr-timer set too, which one wins is unclear: refused. */
    private void minRnrDelay(java.time.Duration delay, Integer code) {
        if (delay == null) {
            return;
        }
        if (code != null) {
            throw invalid("min-rnr-delay", delay, "set together with " + prefix + ".min-rnr-timer (" + code
                    + "): set one of them");
        }
        int derived;
        try {
            derived = RnrTimerCodes.codeFor(delay);
        } catch (IllegalArgumentException e) {
            throw invalid("min-rnr-delay", delay, e.getMessage());
        }
        option("min-rnr-timer", RdmaOption.MIN_RNR_TIMER, derived);
    }

    private PollerIdleStrategy idleStrategy(RdmaProperties.IdleStrategy strategy, RdmaProperties.Backoff b,
            long spinPolls) {
        if (strategy == null) {
            throw invalid("idle-strategy", null, "must be one of event-driven, backoff, busy-spin");
        }
        switch (strategy) {
            case BUSY_SPIN:
                return PollerIdleStrategy.busySpin();
            case EVENT_DRIVEN:
                try {
                    return PollerIdleStrategy.eventDriven(spinPolls);
                } catch (InvalidRequestException e) {
                    throw invalid("event-driven-spin-polls", spinPolls, e.getMessage());
                }
            default:
                long minNs = nanos("backoff.min-park-period", b.getMinParkPeriod());
                long maxNs = nanos("backoff.max-park-period", b.getMaxParkPeriod());
                try {
                    return PollerIdleStrategy.backoff(b.getMaxSpins(), b.getMaxYields(), minNs, maxNs);
                } catch (InvalidRequestException e) {
                    throw invalid("backoff", "max-spins=" + b.getMaxSpins() + ", max-yields=" + b.getMaxYields()
                            + ", min-park-period=" + b.getMinParkPeriod() + ", max-park-period="
                            + b.getMaxParkPeriod(), e.getMessage());
                }
        }
    }

    private <T> void option(String property, RdmaOption<T> option, T value) {
        if (value == null) {
            throw invalid(property, null, "must be set (the default is " + option.defaultValue() + ")");
        }
        try {
            config = config.withOption(option, value);
        } catch (InvalidRequestException e) {
            throw invalid(property, value, e.getMessage());
        }
    }

    /** A size as the int the option takes; a size beyond int is refused here, as the option would refuse it. */
    private Integer bytes(String property, DataSize size) {
        if (size == null) {
            return null;
        }
        long b = size.toBytes();
        if (b < Integer.MIN_VALUE || b > Integer.MAX_VALUE) {
            throw invalid(property, size, "too large: a size in bytes that fits an int");
        }
        return (int) b;
    }

    private long nanos(String property, Duration d) {
        if (d == null) {
            throw invalid(property, null, "must be set");
        }
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            throw invalid(property, d, "too long: at most 292 years in nanoseconds");
        }
    }

    private InvalidConfigurationPropertyValueException invalid(String property, Object value, String reason) {
        return new InvalidConfigurationPropertyValueException(prefix + "." + property, value, reason);
    }
}
