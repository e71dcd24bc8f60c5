package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.verbs.CmId;

import io.reactiverdma.reactive.ConnectionEvent;

import java.net.InetSocketAddress;
import java.util.function.Consumer;

/**
 * A server connection that closes before it was accepted rejects its peer, once, while its id still exists
 * (rather than letting the peer wait for its connect timeout), and its events get REJECTED. The close's
 * disconnect and the accept decision both come here; the first does it. rdma_cm thread only.
 */
public final class UnacceptedRejection {
    private final CmId id;
    private final InetSocketAddress peer;
    private final Consumer<ConnectionEvent> emit;
    /** The reject's private data while the connection is not accepted yet, else null. */
    private byte[] data;

    UnacceptedRejection(CmId id, InetSocketAddress peer, Consumer<ConnectionEvent> emit) {
        this.id = id;
        this.peer = peer;
        this.emit = emit;
    }

    /** Server, before the accept: a close from now until {@link #accepting()} rejects the peer with {@code data}. */
    public void arm(byte[] data) {
        this.data = data;
    }

    /** Server: the accept is made now; from here on a close disconnects instead. */
    public void accepting() {
        data = null;
    }

    /** Rejects the peer now if the connection closed before it was accepted (else nothing). */
    public void rejectNow() {
        byte[] d = data;
        if (d == null) {
            return;
        }
        data = null;
        try {
            id.reject(d);
        } catch (RuntimeException gaveUp) {
            return; // the peer gave up already: it sees its own timeout
        }
        emit.accept(new ConnectionEvent(ConnectionEvent.Type.REJECTED, 0, d, peer));
    }
}
