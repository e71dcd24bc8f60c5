package io.reactiverdma.reactive;

import java.net.InetSocketAddress;

/** rdma_cm could not join a multicast group (MULTICAST_ERROR, or the join call itself failed). */
public class RdmaMulticastException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final transient InetSocketAddress group;
    private final int status;

    public RdmaMulticastException(InetSocketAddress group, int status, String message) {
        super(message);
        this.group = group;
        this.status = status;
    }

    /** The group that was not joined. */
    public InetSocketAddress group() {
        return group;
    }

    /** The event's status (a negative errno), or 0 when the call failed before any event. */
    public int status() {
        return status;
    }
}
