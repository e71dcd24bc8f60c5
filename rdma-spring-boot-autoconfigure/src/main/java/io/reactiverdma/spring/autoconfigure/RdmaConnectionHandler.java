package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaConnection;
import org.reactivestreams.Publisher;

import java.util.function.Function;

/**
 * What the auto-configured RDMA server does with each accepted connection (a bean of this type, with
 * {@code reactive-rdma.server.enabled=true}, starts the server). The same contract as
 * {@link io.reactiverdma.reactive.RdmaServer#handle(Function)}: called on the rdma_cm event thread before the
 * connection is accepted (do not block); the connection closes when the returned publisher terminates.
 */
@FunctionalInterface
public interface RdmaConnectionHandler extends Function<RdmaConnection, Publisher<Void>> {
}
