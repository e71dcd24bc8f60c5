package io.reactiverdma.reactive;

import reactor.core.publisher.Mono;

/**
 * A server's admission step ({@link RdmaServer#accept(ConnectionAcceptor)}): decides each connection request
 * before the engine allocates anything for it.
 */
@FunctionalInterface
public interface ConnectionAcceptor {
    /**
     * The decision on {@code request}: a {@code Mono} that emits one {@link Admission}. It may complete on any
     * thread; it must not block the calling thread (the rdma_cm event thread). An error, an empty completion,
     * or no answer within {@link RdmaOption#ACCEPT_TIMEOUT} rejects the request (the client sees
     * {@link ConnectionRejectedException.Rejection#SERVER_ERROR} or
     * {@link ConnectionRejectedException.Rejection#ACCEPT_TIMEOUT}); the {@code Mono} is then cancelled.
     */
    Mono<Admission> admit(ConnectRequest request);
}
