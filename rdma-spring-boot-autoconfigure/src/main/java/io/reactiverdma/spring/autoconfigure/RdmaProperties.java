package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.unit.DataSize;

import java.time.Duration;

/**
 * The {@code reactive-rdma.*} properties: the {@link io.reactiverdma.reactive.RdmaClient} bean's settings
 * ({@code reactive-rdma.client.*}) and an optional server's ({@code reactive-rdma.server.*}). Each option's
 * default is the API's own ({@link io.reactiverdma.reactive.RdmaOption}); values are checked by the API when
 * the beans are created, and a refused value fails the context start naming the property.
 */
@ConfigurationProperties(prefix = RdmaProperties.PREFIX)
public class RdmaProperties {
    /** The properties' prefix. */
    public static final String PREFIX = "reactive-rdma";

    /**
     * Record the engine's meters (rdma.*) in the application's MeterRegistry, when there is one (Micrometer
     * on the class path and a MeterRegistry bean, as with Spring Boot Actuator).
     */
    private boolean metrics = true;

    /**
     * Also tag the engine's meters with the peer's IP address, for at most this many distinct peers per device
     * (later ones are tagged "other"); 0: no remote tag (0..10000).
     */
    private int metricsRemoteAddressTags = 0;

    /**
     * Wrap every connect and accept in a Micrometer Observation (rdma.client.connect, rdma.server.accept), when
     * there is an ObservationRegistry bean: Micrometer Tracing then shows them in traces.
     */
    private boolean observations = true;

    /**
     * When the context closes, release the engine's process-wide resources (RdmaResources.disposeLater():
     * protection domains, pinned memory, poller and rdma_cm threads). The engine is shared by the JVM: only the
     * last open context with this set releases it, and RDMA used outside such contexts ends with it.
     */
    private boolean releaseEngineOnClose = false;

    private final Client client = new Client();

    private final Server server = new Server();

    private final Datagram datagram = new Datagram();

    public boolean isMetrics() {
        return metrics;
    }

    public void setMetrics(boolean metrics) {
        this.metrics = metrics;
    }

    public int getMetricsRemoteAddressTags() {
        return metricsRemoteAddressTags;
    }

    /**
     * Checked here, when bound, so a bad cap fails the start with or without a MeterRegistry (the bound is a
     * compile-time constant: nothing of Micrometer is loaded).
     */
    public void setMetricsRemoteAddressTags(int metricsRemoteAddressTags) {
        if (metricsRemoteAddressTags < 0 || metricsRemoteAddressTags > MicrometerRdmaRecorder.MAX_REMOTE_ADDRESS_TAGS) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".metrics-remote-address-tags",
                    metricsRemoteAddressTags, "maxRemoteAddressTags must be 0.."
                            + MicrometerRdmaRecorder.MAX_REMOTE_ADDRESS_TAGS + ", got " + metricsRemoteAddressTags);
        }
        this.metricsRemoteAddressTags = metricsRemoteAddressTags;
    }

    public boolean isObservations() {
        return observations;
    }

    public void setObservations(boolean observations) {
        this.observations = observations;
    }

    public boolean isReleaseEngineOnClose() {
        return releaseEngineOnClose;
    }

    public void setReleaseEngineOnClose(boolean releaseEngineOnClose) {
        this.releaseEngineOnClose = releaseEngineOnClose;
    }

    public Client getClient() {
        return client;
    }

    public Server getServer() {
        return server;
    }

    public Datagram getDatagram() {
        return datagram;
    }

    /** What a completion poller does when it finds no completion (see PollerIdleStrategy). */
    public enum IdleStrategy {
        /**
         * Poll event-driven-spin-polls more times after work, then sleep on the completion channel until the
         * device signals: no CPU while idle beyond that bounded spin.
         */
        EVENT_DRIVEN,
        /** Spin, yield, then park for growing periods (the backoff.* properties). */
        BACKOFF,
        /** Poll again at once: lowest latency, one core per poller. */
        BUSY_SPIN
    }

    /** What a client, a server and a datagram endpoint all have (RdmaOption); every default is the API's. */
    public abstract static class Endpoint {
        /**
         * Client: the server's address (unset: give it per connection with RdmaClient.host(..)); server and
         * datagram endpoint: the local address to bind (a server requires it). Either way an address on an RDMA
         * device's netdev.
         */
        private String host;

        // The API's constant, not a literal, so the configuration metadata takes no default from this shared base:
        // the RSocket server's port has none (unset, no server is started); the others' 7471 is in
        // additional-spring-configuration-metadata.json.
        /** The rdma_cm port; a server or datagram endpoint takes 0 as "any free port". */
        private int port = io.reactiverdma.reactive.RdmaTransportConfig.DEFAULT_PORT;

        /** Send queue slots: outstanding sends, WRITEs, READs and atomics per connection, or datagrams in flight (1..16384). */
        private int sendQueueDepth = 128;

        /** Receive buffers per connection or endpoint: the most receives posted (and credits advertised); datagrams arriving while all are full are dropped (1..16384). */
        private int receiveQueueDepth = 64;

        /** Completions taken per ibv_poll_cq call (1..1024). */
        private int pollBatchSize = 32;

        /** Per-connection (per-endpoint) or shared completion queues (and so poller threads). */
        private CompletionQueueMode completionQueueMode = CompletionQueueMode.SHARED;

        /** What completion pollers do when idle. */
        private IdleStrategy idleStrategy = IdleStrategy.EVENT_DRIVEN;

        /** The backoff idle strategy's steps (used when idle-strategy is backoff). */
        private final Backoff backoff = new Backoff();

        /**
         * Polls after work before an event-driven poller arms the CQ and sleeps (used when idle-strategy is
         * event-driven; 0: sleep at the first empty poll; the literal is PollerIdleStrategy.DEFAULT_SPIN_POLLS).
         */
        private long eventDrivenSpinPolls = 64;

        public String getHost() {
            return host;
        }

        public void setHost(String host) {
            this.host = host;
        }

        public int getPort() {
            return port;
        }

        public void setPort(int port) {
            this.port = port;
        }

        public int getSendQueueDepth() {
            return sendQueueDepth;
        }

        public void setSendQueueDepth(int sendQueueDepth) {
            this.sendQueueDepth = sendQueueDepth;
        }

        public int getReceiveQueueDepth() {
            return receiveQueueDepth;
        }

        public void setReceiveQueueDepth(int receiveQueueDepth) {
            this.receiveQueueDepth = receiveQueueDepth;
        }

        public int getPollBatchSize() {
            return pollBatchSize;
        }

        public void setPollBatchSize(int pollBatchSize) {
            this.pollBatchSize = pollBatchSize;
        }

        public CompletionQueueMode getCompletionQueueMode() {
            return completionQueueMode;
        }

        public void setCompletionQueueMode(CompletionQueueMode completionQueueMode) {
            this.completionQueueMode = completionQueueMode;
        }

        public IdleStrategy getIdleStrategy() {
            return idleStrategy;
        }

        public void setIdleStrategy(IdleStrategy idleStrategy) {
            this.idleStrategy = idleStrategy;
        }

        public Backoff getBackoff() {
            return backoff;
        }

        public long getEventDrivenSpinPolls() {
            return eventDrivenSpinPolls;
        }

        public void setEventDrivenSpinPolls(long eventDrivenSpinPolls) {
            this.eventDrivenSpinPolls = eventDrivenSpinPolls;
        }
    }

    /** The options both a client and a server have beyond the endpoint's (RdmaOption); every default is the API's. */
    public abstract static class Transport extends Endpoint {








        /** Size of each receive buffer: the largest message this side receives (8B..4MB). */
        private DataSize receiveBufferSize = DataSize.ofBytes(4096);

        /** Sends of at most this size are posted inline (0..256B; the device may grant less). */
        private DataSize maxInlineData = DataSize.ofBytes(64);


        /** Offer credit-based flow control to the peer (used when both sides offer it). */
        private boolean creditFlowControl = true;




        /** Outstanding RDMA READs and atomics this side issues: the initiator depth (1..255). */
        private int readAtomicDepth = 4;

        /** How often the peer's device retries a send that found no receive posted (0..6). */
        private int rnrRetryCount = 3;

        /**
         * This side's minimum RNR NAK timer, the IBA code (0..31; 12 = 0.64 ms, 0 = 655 ms): how long a peer whose
         * send found no receive posted waits before it retries. Unset: the engine's default, 12, or 26 (81.92 ms)
         * on a server's connections on a shared receive queue.
         */
        private Integer minRnrTimer;

        /**
         * This side's minimum RNR NAK timer as a delay, in place of min-rnr-timer's code: the code of the
         * shortest delay not below it (10us steps up to 640us = 12, then roughly doubling every two codes;
         * 1ms -> 1.28 ms; the longest, 655.36 ms, is code 0). Unset: min-rnr-timer applies.
         */
        private Duration minRnrDelay;

        /** Transport retries after an ACK timeout (0..7). */
        private int retryCount = 6;

        /**
         * Local ACK timeout exponent t (4.096us x 2^t; a dead peer is detected within (retry-count + 1) x that;
         * 14: 67 ms, 19: 2.1 s); 0: rdma_cm's own value (0..31).
         */
        private int ackTimeoutExponent = 0;

        /**
         * Requests not acknowledged by the peer's device are signalled every this many (1 signals every request);
         * the others complete with a later signalled one (1..16384).
         */
        private int signalInterval = 16;

        /** Completion vector of the connections' completion queues, modulo the device's count (0..1023). */
        private int completionVector = 0;

        /**
         * A connection quiet for this long is probed with a zero-length RDMA WRITE, so a dead idle peer closes it
         * (the probe's RETRY_EXC_ERR, or its deadline) within 2.5 x this at most; 0 turns it off (0, or
         * 1ms..2^31-1ms).
         */
        private Duration idleProbeInterval = Duration.ofSeconds(20);

        public Duration getIdleProbeInterval() {
            return idleProbeInterval;
        }

        public void setIdleProbeInterval(Duration idleProbeInterval) {
            this.idleProbeInterval = idleProbeInterval;
        }

        public int getAckTimeoutExponent() {
            return ackTimeoutExponent;
        }

        public void setAckTimeoutExponent(int ackTimeoutExponent) {
            this.ackTimeoutExponent = ackTimeoutExponent;
        }

        /** The old name of ack-timeout-exponent, which read as a duration but is not one. */
        @Deprecated
        @DeprecatedConfigurationProperty(
                reason = "an exponent (4.096us x 2^t), not a duration: renamed ack-timeout-exponent")
        public int getAckTimeout() {
            return ackTimeoutExponent;
        }

        @Deprecated
        public void setAckTimeout(int ackTimeout) {
            this.ackTimeoutExponent = ackTimeout;
        }

        public int getSignalInterval() {
            return signalInterval;
        }

        public void setSignalInterval(int signalInterval) {
            this.signalInterval = signalInterval;
        }

        public int getCompletionVector() {
            return completionVector;
        }

        public void setCompletionVector(int completionVector) {
            this.completionVector = completionVector;
        }





        public DataSize getReceiveBufferSize() {
            return receiveBufferSize;
        }

        public void setReceiveBufferSize(DataSize receiveBufferSize) {
            this.receiveBufferSize = receiveBufferSize;
        }

        public DataSize getMaxInlineData() {
            return maxInlineData;
        }

        public void setMaxInlineData(DataSize maxInlineData) {
            this.maxInlineData = maxInlineData;
        }



        public boolean isCreditFlowControl() {
            return creditFlowControl;
        }

        public void setCreditFlowControl(boolean creditFlowControl) {
            this.creditFlowControl = creditFlowControl;
        }






        public int getReadAtomicDepth() {
            return readAtomicDepth;
        }

        public void setReadAtomicDepth(int readAtomicDepth) {
            this.readAtomicDepth = readAtomicDepth;
        }

        public int getRnrRetryCount() {
            return rnrRetryCount;
        }

        public void setRnrRetryCount(int rnrRetryCount) {
            this.rnrRetryCount = rnrRetryCount;
        }

        public Integer getMinRnrTimer() {
            return minRnrTimer;
        }

        public void setMinRnrTimer(Integer minRnrTimer) {
            this.minRnrTimer = minRnrTimer;
        }

        public Duration getMinRnrDelay() {
            return minRnrDelay;
        }

        public void setMinRnrDelay(Duration minRnrDelay) {
            this.minRnrDelay = minRnrDelay;
        }

        public int getRetryCount() {
            return retryCount;
        }

        public void setRetryCount(int retryCount) {
            this.retryCount = retryCount;
        }
    }

    /** The backoff idle strategy: spin, then yield, then park from min-park-period doubling to max-park-period. */
    public static class Backoff {
        /** Polls spun before yielding. */
        private long maxSpins = 10;

        /** Thread.yield() calls before parking. */
        private long maxYields = 5;

        /** First park period (at least 1ns). */
        private Duration minParkPeriod = Duration.ofNanos(1000);

        /** Longest park period, the worst wake-up latency (at least min-park-period). */
        private Duration maxParkPeriod = Duration.ofMillis(1);

        public long getMaxSpins() {
            return maxSpins;
        }

        public void setMaxSpins(long maxSpins) {
            this.maxSpins = maxSpins;
        }

        public long getMaxYields() {
            return maxYields;
        }

        public void setMaxYields(long maxYields) {
            this.maxYields = maxYields;
        }

        public Duration getMinParkPeriod() {
            return minParkPeriod;
        }

        public void setMinParkPeriod(Duration minParkPeriod) {
            this.minParkPeriod = minParkPeriod;
        }

        public Duration getMaxParkPeriod() {
            return maxParkPeriod;
        }

        public void setMaxParkPeriod(Duration maxParkPeriod) {
            this.maxParkPeriod = maxParkPeriod;
        }
    }

    /** The RdmaClient bean: where it connects and how. */
    public static class Client extends Transport {
        /** Limit for resolving the address and route and connecting (1ms..2^31-1ms). */
        private Duration connectTimeout = Duration.ofSeconds(10);

        /** The local address to connect from (an address of an RDMA device's netdev); unset: routing picks. */
        private String localAddress;

        /** IP type of service / traffic class of the connections (0..255); -1: rdma_cm's default. */
        private int typeOfService = -1;

        public String getLocalAddress() {
            return localAddress;
        }

        public void setLocalAddress(String localAddress) {
            this.localAddress = localAddress;
        }

        public int getTypeOfService() {
            return typeOfService;
        }

        public void setTypeOfService(int typeOfService) {
            this.typeOfService = typeOfService;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }
    }

    /**
     * What every server over RDMA that the auto-configuration binds has: the RDMA server of
     * {@code reactive-rdma.server.*} and the RSocket server over RDMA of {@code reactive-rdma.rsocket.server.*}
     * (bound once, by one code path, for both).
     */
    public abstract static class Listener extends Transport {
        /** How long the context start waits for the server to listen. */
        private Duration bindTimeout = Duration.ofSeconds(30);

        /** How long shutdown waits for the server's connections to close after it stopped listening. */
        private Duration shutdownTimeout = Duration.ofSeconds(30);

        /** The most connections open (or being admitted) at once; beyond it requests are rejected (1..2^31-1). */
        private int maxConnections = Integer.MAX_VALUE;

        /** How long a ConnectionAcceptor bean may take to decide a request (1ms..2^31-1ms). */
        private Duration acceptTimeout = Duration.ofSeconds(5);

        /**
         * When positive, every connection receives from one shared receive queue of this many buffers (per device),
         * so receive memory does not grow with the connections; receive-queue-depth is then the most one connection
         * may hold. 0: each connection its own receive-queue-depth buffers (0..1048576).
         */
        private int sharedReceiveQueueDepth = 0;

        /**
         * With shared-receive-queue-depth: servers of the JVM naming the same group share one shared receive queue
         * per device (they must agree on its depth, the buffer size, receive-queue-depth, idle-strategy and
         * poll-batch-size). Empty: this server's own (at most 64 characters).
         */
        private String sharedReceiveQueueGroup = "";

        public int getSharedReceiveQueueDepth() {
            return sharedReceiveQueueDepth;
        }

        public void setSharedReceiveQueueDepth(int sharedReceiveQueueDepth) {
            this.sharedReceiveQueueDepth = sharedReceiveQueueDepth;
        }

        public String getSharedReceiveQueueGroup() {
            return sharedReceiveQueueGroup;
        }

        public void setSharedReceiveQueueGroup(String sharedReceiveQueueGroup) {
            this.sharedReceiveQueueGroup = sharedReceiveQueueGroup;
        }

        public int getMaxConnections() {
            return maxConnections;
        }

        public void setMaxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
        }

        public Duration getAcceptTimeout() {
            return acceptTimeout;
        }

        public void setAcceptTimeout(Duration acceptTimeout) {
            this.acceptTimeout = acceptTimeout;
        }

        public Duration getBindTimeout() {
            return bindTimeout;
        }

        public void setBindTimeout(Duration bindTimeout) {
            this.bindTimeout = bindTimeout;
        }

        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }
    }

    /**
     * An RDMA server in the application, bound when the context starts (after the web server) and disposed when
     * it stops (before the web server), by {@link RdmaServerLifecycle}; needs an RdmaConnectionHandler bean.
     */
    public static class Server extends Listener {
        /** Start a server (the application must provide an RdmaConnectionHandler bean). */
        private boolean enabled;

        /**
         * Graceful shutdown: how long open connections may go on working after the server stopped accepting,
         * before they are closed (DisposableRdmaServer.disposeGracefully); 0: closed at once.
         */
        private Duration drainTimeout = Duration.ZERO;

        public Duration getDrainTimeout() {
            return drainTimeout;
        }

        public void setDrainTimeout(Duration drainTimeout) {
            this.drainTimeout = drainTimeout;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * The RdmaDatagram bean (unreliable datagrams and multicast): a configuration that binds nothing until
     * asked ({@code RdmaDatagram.bind()}).
     */
    public static class Datagram extends Endpoint {








        /** Limit for resolving a peer's address (1ms..2^31-1ms). */
        private Duration connectTimeout = Duration.ofSeconds(10);

        /** The most address handles kept for unicast peers; beyond it the least recently used goes (1..1048576). */
        private int addressHandles = 1024;

        /** How long a resolved peer is trusted before the next send resolves it again (1ms..2^31-1ms). */
        private Duration peerRefresh = Duration.ofSeconds(10);
















        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public int getAddressHandles() {
            return addressHandles;
        }

        public void setAddressHandles(int addressHandles) {
            this.addressHandles = addressHandles;
        }

        public Duration getPeerRefresh() {
            return peerRefresh;
        }

        public void setPeerRefresh(Duration peerRefresh) {
            this.peerRefresh = peerRefresh;
        }
    }
}
