package io.reactiverdma.reactive;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A typed, validated connection option, set with {@code RdmaClient.option(..)} / {@code RdmaServer.option(..)}
 * (as Netty's {@code ChannelOption}). Each constant documents its default and range; a value outside the
 * range is refused when it is set, with an {@link InvalidRequestException} naming the option.
 *
 * @param <T> the value type
 */
public final class RdmaOption<T> {
    /**
     * The roles an option can be set on: a role refuses an option it does not use (see {@link #roles()}), so a
     * setting that would change nothing is an error when it is made, not a surprise later.
     */
    public enum Role {
        /** {@link RdmaClient} (and {@link RdmaClientConfig}). */
        CLIENT,
        /** {@link RdmaServer} (and {@link RdmaServerConfig}). */
        SERVER,
        /** {@link RdmaDatagram} (and {@link RdmaDatagramConfig}). */
        DATAGRAM;

        /** The role's name in an error message: "client", "server", "datagram endpoint". */
        String description() {
            return this == DATAGRAM ? "datagram endpoint" : name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private static final Set<Role> ANY = EnumSet.allOf(Role.class);
    private static final Set<Role> CONNECTIONS = EnumSet.of(Role.CLIENT, Role.SERVER);
    private static final Set<Role> CLIENT_AND_DATAGRAM = EnumSet.of(Role.CLIENT, Role.DATAGRAM);
    private static final Set<Role> CLIENT_ONLY = EnumSet.of(Role.CLIENT);
    private static final Set<Role> SERVER_ONLY = EnumSet.of(Role.SERVER);
    private static final Set<Role> DATAGRAM_ONLY = EnumSet.of(Role.DATAGRAM);

    /** Send queue slots (outstanding sends, WRITEs, READs, atomics). Default 128; 1..16384. */
    public static final RdmaOption<Integer> SEND_QUEUE_DEPTH = intOption("SEND_QUEUE_DEPTH", 128, 1, 16384, ANY);
    /**
     * Receive buffers per connection, so the most receives ever posted, and the most credits advertised.
     * Default 64; 1..16384.
     */
    public static final RdmaOption<Integer> RECEIVE_QUEUE_DEPTH = intOption("RECEIVE_QUEUE_DEPTH", 64, 1, 16384, ANY);
    /**
     * Size of each receive buffer: the largest message this side receives. Default 4096; 8..4 MiB (receive
     * buffers come from the registered pool, whose largest buffer is 4 MiB; move bigger data with
     * {@link RdmaConnection#write} or {@link RdmaConnection#read}).
     */
    public static final RdmaOption<Integer> RECEIVE_BUFFER_SIZE = intOption("RECEIVE_BUFFER_SIZE", 4096, 8, 4 << 20, CONNECTIONS);
    /**
     * Sends (with or without immediate data) and RDMA WRITEs (without) of 1 to this many bytes are posted
     * inline (copied by the CPU at post time, so the buffer is free at once). Default 64;
     * 0..256 (the device may grant less).
     */
    public static final RdmaOption<Integer> MAX_INLINE_DATA = intOption("MAX_INLINE_DATA", 64, 0, 256, CONNECTIONS);
    /** Completions taken per {@code ibv_poll_cq} call. Default 32; 1..1024. */
    public static final RdmaOption<Integer> POLL_BATCH_SIZE = intOption("POLL_BATCH_SIZE", 32, 1, 1024, ANY);
    /**
     * Offer credit-based flow control to the peer (negotiated in the rdma_cm private data; used only when
     * both sides offer it). Default true.
     */
    public static final RdmaOption<Boolean> CREDIT_FLOW_CONTROL = new RdmaOption<>("CREDIT_FLOW_CONTROL",
            Boolean.class, true, v -> true, "true or false", CONNECTIONS);
    /** Per-connection or shared completion queues. Default {@link CompletionQueueMode#SHARED}. */
    public static final RdmaOption<CompletionQueueMode> COMPLETION_QUEUE_MODE = new RdmaOption<>(
            "COMPLETION_QUEUE_MODE", CompletionQueueMode.class, CompletionQueueMode.SHARED, v -> true, "a mode", ANY);
    /** What pollers do when idle. Default {@link PollerIdleStrategy#eventDriven()}. */
    public static final RdmaOption<PollerIdleStrategy> IDLE_STRATEGY = new RdmaOption<>("IDLE_STRATEGY",
            PollerIdleStrategy.class, PollerIdleStrategy.eventDriven(), v -> true, "a strategy", ANY);
    /** Limit for resolving and connecting, on the client (the server side relies on rdma_cm's own timeouts). Default 10 s. */
    public static final RdmaOption<Duration> CONNECT_TIMEOUT = new RdmaOption<>("CONNECT_TIMEOUT", Duration.class,
            Duration.ofSeconds(10), d -> d.compareTo(Duration.ofMillis(1)) >= 0
                    && d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) <= 0,
            "a duration from 1 ms to 2^31-1 ms (rdma_cm takes milliseconds)", CLIENT_AND_DATAGRAM);
    /** Outstanding RDMA READs and atomics this side issues (initiator depth). Default 4; 1..255. */
    public static final RdmaOption<Integer> READ_ATOMIC_DEPTH = intOption("READ_ATOMIC_DEPTH", 4, 1, 255, CONNECTIONS);
    /**
     * How often the peer's device retries a send that found no receive posted (RNR). With credit flow
     * control no RNR happens; with a plain peer it may. Default 3; 0..6 (7, "forever", is refused: a peer
     * that stops receiving would hang the connection).
     */
    public static final RdmaOption<Integer> RNR_RETRY_COUNT = intOption("RNR_RETRY_COUNT", 3, 0, 6, CONNECTIONS);
    /**
     * The minimum RNR NAK timer of this side's queue pair ({@code min_rnr_timer}, the IBA code 0..31): how
     * long a peer whose send found no receive posted here waits before it retries. rdma_cm sets code 0 when it
     * brings the queue pair up, which means 655 ms, the longest; the engine sets this value right after
     * {@code rdma_accept} (server) or on ESTABLISHED (client) with {@code ibv_modify_qp}. Codes: 1 = 0.01 ms,
     * doubling roughly every two steps, 12 = 0.64 ms, 18 = 5.12 ms, 24 = 40.96 ms, 31 = 491.52 ms, 0 = 655.36
     * ms. With credits no RNR happens; with a plain peer it costs this per retry. Default 12 (0.64 ms, as
     * rdma-core's examples use), except on a server's connections on a shared receive queue, where it is 26
     * (81.92 ms): there a peer that keeps to its credits meets RNR only when one that does not took the
     * receives promised to it, until the server posts them again, and its retries ({@link #RNR_RETRY_COUNT}
     * of them, this far apart) must outlast the server's reaction, a GC pause included; set explicitly, the
     * value set applies there too. 0..31.
     */
    public static final RdmaOption<Integer> MIN_RNR_TIMER = intOption("MIN_RNR_TIMER", 12, 0, 31, CONNECTIONS);
    /**
     * Transport retries after an ACK timeout (see {@link #ACK_TIMEOUT} for how long a dead peer takes to
     * detect). The client's value is carried in the connect request and used by both sides' QPs (the IB CM
     * ignores it on accept). Default 6; 0..7.
     */
    public static final RdmaOption<Integer> RETRY_COUNT = intOption("RETRY_COUNT", 6, 0, 7, CONNECTIONS);

    /**
     * Selective signalling: one send-queue work request in this many asks the device for a completion, and
     * so does the last of every chain the engine posts; the others complete when a later signalled one
     * completes (RC completes a send queue in order, and a failed or flushed request always gives its own
     * completion). Fewer completions to poll and dispatch; the operations' outcomes and buffer lifetimes
     * stay exact. 1 signals every request. Default 16; 1..16384.
     */
    public static final RdmaOption<Integer> SIGNAL_INTERVAL = intOption("SIGNAL_INTERVAL", 16, 1, 16384, ANY);

    /**
     * The local ACK timeout exponent t: a sent request unacknowledged for 4.096 us x 2^t is retransmitted, and
     * after {@link #RETRY_COUNT} retransmissions its work request fails with {@code RETRY_EXC_ERR}, so a dead
     * peer is detected about (RETRY_COUNT + 1) x 4.096 us x 2^t after the first unanswered send (t = 14: 0.47 s
     * with RETRY_COUNT 6; t = 19, rdma_cm's usual RoCE value: 15.0 s). Default 0: rdma_cm's own value (from the
     * path's packet lifetime); 1..31 sets it with {@code rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)} on this
     * side's QP (each side times out its own requests). Too small a value retransmits needlessly on a slow
     * path.
     */
    public static final RdmaOption<Integer> ACK_TIMEOUT = intOption("ACK_TIMEOUT", 0, 0, 31, CONNECTIONS);
    /**
     * The type of service (IP TOS / traffic class) of a client's connection, set with
     * {@code rdma_set_option(RDMA_OPTION_ID_TOS)} before its route is resolved. Client only: the server answers
     * in the class the request came with. Default -1: not set (rdma_cm's default); 0..255.
     */
    public static final RdmaOption<Integer> TYPE_OF_SERVICE = intOption("TYPE_OF_SERVICE", -1, -1, 255, CLIENT_ONLY);
    /**
     * The local address (IP literal or host name of an RDMA device's netdev) a client connects from: its
     * connection leaves through that address's device and port. Client only. Default "" (empty): routing picks.
     */
    public static final RdmaOption<String> LOCAL_ADDRESS = new RdmaOption<>("LOCAL_ADDRESS", String.class, "",
            v -> v.isEmpty() || !v.isBlank(), "a host name or IP address, or empty for none", CLIENT_ONLY);
    /**
     * The completion vector (the interrupt, so the CPU) of the completion queues this configuration's
     * connections use, where the device has several ({@code num_comp_vectors}); a value beyond the device's
     * count wraps around (vector mod count), so one configuration fits every device. Connections asking for
     * different vectors never share a completion queue or poller. Default 0; 0..1023.
     */
    public static final RdmaOption<Integer> COMPLETION_VECTOR = intOption("COMPLETION_VECTOR", 0, 0, 1023, ANY);
    /**
     * Server: the most connections it has at once (open or being admitted); a request beyond it is rejected
     * with {@link ConnectionRejectedException.Rejection#CONNECTION_LIMIT}. Default and maximum 2^31-1.
     */
    public static final RdmaOption<Integer> MAX_CONNECTIONS = intOption("MAX_CONNECTIONS", Integer.MAX_VALUE, 1,
            Integer.MAX_VALUE, SERVER_ONLY);
    /**
     * Server: how long its {@link ConnectionAcceptor} may take to answer a request before the request is
     * rejected with {@link ConnectionRejectedException.Rejection#ACCEPT_TIMEOUT}. Keep it below the clients'
     * {@link #CONNECT_TIMEOUT}. Default 5 s; 1 ms to 2^31-1 ms.
     */
    public static final RdmaOption<Duration> ACCEPT_TIMEOUT = new RdmaOption<>("ACCEPT_TIMEOUT", Duration.class,
            Duration.ofSeconds(5), d -> d.compareTo(Duration.ofMillis(1)) >= 0
                    && d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) <= 0,
            "a duration from 1 ms to 2^31-1 ms", SERVER_ONLY);
    /**
     * Servers only: when positive, every connection of the server (per RDMA device) receives from one shared
     * receive queue of this many buffers of {@link #RECEIVE_BUFFER_SIZE}, so the server's pinned receive
     * memory is this times the buffer size whatever the number of connections; {@link #RECEIVE_QUEUE_DEPTH}
     * is then the most of it one connection may hold (credits advertised plus messages not released). With
     * credit flow control no load produces RNR. Clients ignore it. Default 0 (each connection has its own
     * {@link #RECEIVE_QUEUE_DEPTH} buffers); 0..1048576 (and at most the device's {@code max_srq_wr}).
     */
    public static final RdmaOption<Integer> SHARED_RECEIVE_QUEUE_DEPTH = intOption("SHARED_RECEIVE_QUEUE_DEPTH", 0, 0, 1 << 20, SERVER_ONLY);
    /**
     * Servers with {@link #SHARED_RECEIVE_QUEUE_DEPTH} only: servers of one engine that name the same group
     * share one shared receive queue per device (and its poller thread), so several services on one host
     * pin one SRQ's memory together. They must agree on {@link #SHARED_RECEIVE_QUEUE_DEPTH},
     * {@link #RECEIVE_BUFFER_SIZE}, {@link #RECEIVE_QUEUE_DEPTH}, {@link #IDLE_STRATEGY} and
     * {@link #POLL_BATCH_SIZE} (a connection request to a server that does not is rejected, and the reason
     * logged); the SRQ goes when the last of them is disposed. Default "" (each server its own SRQ); a name
     * of at most 64 characters.
     */
    public static final RdmaOption<String> SHARED_RECEIVE_QUEUE_GROUP = new RdmaOption<>("SHARED_RECEIVE_QUEUE_GROUP",
            String.class, "", v -> v.length() <= 64, "a name of at most 64 characters", SERVER_ONLY);

    /**
     * Datagram endpoints only: the most address handles one endpoint keeps for unicast peers, those it sends to
     * and those it replies to (each new sender QP of a {@code reply} needs one: a kernel object, limited per
     * device: rxe reports max_ah 32,767). Beyond it the least recently used is destroyed (once no send
     * in flight names it) and made again when needed: a send re-resolves its peer, a reply re-creates the
     * handle from the datagram's GRH. Multicast groups are not counted. Default 1024; 1..1048576.
     */
    public static final RdmaOption<Integer> DATAGRAM_ADDRESS_HANDLES = intOption("DATAGRAM_ADDRESS_HANDLES", 1024, 1,
            1 << 20, DATAGRAM_ONLY);
    /**
     * Datagram endpoints only: how long a resolved peer is trusted. The first send to a peer after this time
     * resolves it again in the background (rdma_cm's SIDR exchange) while sends go on with the old answer,
     * so a peer that restarted (a new QP number on the same address) is reached again; a peer that no longer
     * answers is forgotten, and the next send resolves it anew (and fails typed if it still does not answer).
     * Default 10 s; 1 ms to 2^31-1 ms.
     */
    public static final RdmaOption<Duration> DATAGRAM_PEER_REFRESH = new RdmaOption<>("DATAGRAM_PEER_REFRESH",
            Duration.class, Duration.ofSeconds(10), d -> d.compareTo(Duration.ofMillis(1)) >= 0
                    && d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) <= 0,
            "a duration from 1 ms to 2^31-1 ms", DATAGRAM_ONLY);

    /**
     * Idle peer detection: a connection on which nothing was posted and nothing completed for this long (give
     * or take a quarter of it) is probed with a signalled zero-length RDMA WRITE (no data, no rkey: any RC peer
     * answers it, a plain rdma_cm program too, and the peer's application sees nothing). A live peer's device
     * acknowledges it; a peer whose host died or is cut off does not, and the probe fails with
     * {@code RETRY_EXC_ERR} after the transport's retry bound (see {@link #ACK_TIMEOUT}), which closes the
     * connection with that {@link RdmaCompletionException}; a probe neither acknowledged nor failed within
     * another interval (a QP that retries longer, or forever) closes it with a
     * {@link ConnectionClosedException}. RC retransmits only while something is
     * outstanding, so without a probe an idle connection never learns that its peer is gone. A busy connection
     * is never probed. Default 20 s (UCX's keepalive interval and RSocket's); {@link Duration#ZERO} turns it
     * off; otherwise 1 ms to 2^31-1 ms.
     */
    public static final RdmaOption<Duration> IDLE_PROBE_INTERVAL = new RdmaOption<>("IDLE_PROBE_INTERVAL",
            Duration.class, Duration.ofSeconds(20), d -> d.isZero() || d.compareTo(Duration.ofMillis(1)) >= 0
                    && d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) <= 0,
            "0 (off) or a duration from 1 ms to 2^31-1 ms", CONNECTIONS);

    /** Every option, for listing and validation. */
    public static final List<RdmaOption<?>> ALL = List.of(SEND_QUEUE_DEPTH, RECEIVE_QUEUE_DEPTH,
            RECEIVE_BUFFER_SIZE, MAX_INLINE_DATA, POLL_BATCH_SIZE, CREDIT_FLOW_CONTROL, COMPLETION_QUEUE_MODE,
            IDLE_STRATEGY, CONNECT_TIMEOUT, READ_ATOMIC_DEPTH, RNR_RETRY_COUNT, MIN_RNR_TIMER, RETRY_COUNT, SIGNAL_INTERVAL,
            ACK_TIMEOUT, TYPE_OF_SERVICE, LOCAL_ADDRESS, COMPLETION_VECTOR, MAX_CONNECTIONS, ACCEPT_TIMEOUT,
            SHARED_RECEIVE_QUEUE_DEPTH, SHARED_RECEIVE_QUEUE_GROUP, DATAGRAM_ADDRESS_HANDLES, DATAGRAM_PEER_REFRESH,
            IDLE_PROBE_INTERVAL);

    private final String name;
    private final Class<T> type;
    private final T defaultValue;
    private final Predicate<T> valid;
    private final String range;
    private final Set<Role> roles;

    private RdmaOption(String name, Class<T> type, T defaultValue, Predicate<T> valid, String range, Set<Role> roles) {
        this.name = name;
        this.type = type;
        this.defaultValue = defaultValue;
        this.valid = valid;
        this.range = range;
        this.roles = Collections.unmodifiableSet(EnumSet.copyOf(roles));
    }

    private static RdmaOption<Integer> intOption(String name, int def, int min, int max, Set<Role> roles) {
        return new RdmaOption<>(name, Integer.class, def, v -> v >= min && v <= max, min + ".." + max, roles);
    }

    public String name() {
        return name;
    }

    public Class<T> type() {
        return type;
    }

    public T defaultValue() {
        return defaultValue;
    }

    /**
     * The roles that use this option (unmodifiable, never empty); setting it on another role fails with
     * {@link InvalidRequestException.Reason#OPTION_NOT_FOR_ROLE}. A role-less configuration
     * ({@link RdmaTransportConfig#defaults()}) takes every option; a role made from it with
     * {@code RdmaClientConfig.of(..)} (or the server's or datagram's) keeps the options of its role only.
     */
    public Set<Role> roles() {
        return roles;
    }

    /** Whether {@code role} uses this option ({@link #roles()} contains it). */
    public boolean appliesTo(Role role) {
        return roles.contains(Objects.requireNonNull(role, "role"));
    }

    /**
     * Returns {@code value} when it is valid for this option.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#ILLEGAL_ARGUMENT}) naming the
     *                                 option and its range otherwise
     */
    public T validate(Object value) {
        Objects.requireNonNull(value, name);
        if (!type.isInstance(value)) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "option " + name + " takes a " + type.getSimpleName() + ", got " + value.getClass().getName());
        }
        T v = type.cast(value);
        if (!valid.test(v)) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "option " + name + " must be " + range + ", got " + v);
        }
        return v;
    }

    @Override
    public String toString() {
        return name;
    }
}
