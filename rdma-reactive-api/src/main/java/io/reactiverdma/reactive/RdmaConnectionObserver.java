package io.reactiverdma.reactive;

import reactor.util.context.ContextView;

import java.net.InetSocketAddress;

/**
 * Told when a connection attempt starts and how it ends, for tracing: a client's {@link RdmaClient#connect()}
 * and each connection a server accepts. Set with {@link RdmaClient#observer(RdmaConnectionObserver)} and
 * {@link RdmaServer#observer(RdmaConnectionObserver)}; names no tracing library:
 * {@link io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver} is the Micrometer Observation one.
 * <p>
 * Called on the engine's threads (the subscriber's for a connect's start, the rdma_cm event thread
 * otherwise): do not block. Each {@link Attempt} gets exactly one of its three calls.
 */
public interface RdmaConnectionObserver {
    /** Which end of the connection this side is. */
    enum Side {
        /** {@link RdmaClient#connect()}. */
        CLIENT,
        /** A server accepting a connection request. */
        SERVER;

        /** The lower-case name used as a tag value. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * An attempt begins. {@code remote} is the server's address (client) or the requesting peer's (server);
     * {@code context} is the connecting subscriber's Reactor context (client; a parent trace lives there),
     * empty for a server's accept.
     */
    Attempt start(Side side, InetSocketAddress remote, ContextView context);

    /** One connection attempt being observed. */
    interface Attempt {
        /** The connection is ESTABLISHED. */
        void established();

        /** The attempt failed with {@code error}. */
        void failed(Throwable error);

        /** The subscriber cancelled (or a client's connect timed out) before it was established. */
        void cancelled();
    }
}
