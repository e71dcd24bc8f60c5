package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.ConnectRequest;
import io.reactiverdma.reactive.impl.connection.Negotiation;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import reactor.core.Disposable;

/**
 * A connection request waiting for the server's acceptor. Touched only on the rdma_cm thread: whoever comes
 * first (the decision, its failure or timeout, the server stopping) {@link #settle settles} it, the others find
 * it settled. Nothing is allocated for it but the request's id, which settling accepts, rejects or destroys.
 */
final class PendingAdmission {
    final CmEventInfo event;
    final ConnectRequest request;
    /** The client's offer, or null for a plain peer. */
    final Negotiation offered;
    private Disposable decision;
    private boolean settled;

    PendingAdmission(CmEventInfo event, ConnectRequest request, Negotiation offered) {
        this.event = event;
        this.request = request;
        this.offered = offered;
    }

    void decision(Disposable d) {
        this.decision = d;
    }

    /** True the first time: the caller decides the request's fate; the acceptor's Mono is cancelled. */
    boolean settle() {
        if (settled) {
            return false;
        }
        settled = true;
        if (decision != null) {
            decision.dispose();
        }
        return true;
    }
}
