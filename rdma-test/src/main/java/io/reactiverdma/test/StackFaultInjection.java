package io.reactiverdma.test;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackFaults;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/** {@link FaultInjection} on one loopback stack's fault switches. */
final class StackFaultInjection implements FaultInjection {
    /** ENOMEM, what a device out of work-request slots or memory answers a post with. */
    private static final int ENOMEM = 12;

    private final LoopbackStack stack;

    StackFaultInjection(LoopbackStack stack) {
        this.stack = stack;
    }

    @Override
    public void dropNextDatagrams(int count) {
        requirePositive(count);
        stack.faults().dropNextDatagrams(count);
    }

    @Override
    public void delayNextConnects(Duration delay, int count) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative: " + delay);
        }
        requirePositive(count);
        stack.faults().delayEvents(CmEventType.ROUTE_RESOLVED, delay, count);
    }

    @Override
    public void refuseNextSendPost() {
        stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, null, 0, ENOMEM);
    }

    @Override
    public void refuseNextReceivePost() {
        stack.faults().refuseNextPost(LoopbackFaults.Post.RECEIVE, null, 0, ENOMEM);
    }

    @Override
    public void killHost(RdmaConnection connection) {
        Objects.requireNonNull(connection, "connection");
        InetSocketAddress local = connection.localAddress();
        InetSocketAddress remote = connection.remoteAddress();
        LoopbackCmId id = stack.liveIds().stream()
                .filter(i -> local.equals(i.localAddress()) && remote.equals(i.peerAddress()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no connection from " + local + " to " + remote
                        + " is open on this loopback device"));
        stack.faults().dropHost(id);
    }

    @Override
    public void clear() {
        stack.faults().clear();
    }

    private static void requirePositive(int count) {
        if (count <= 0) {
            throw new IllegalArgumentException("count must be positive: " + count);
        }
    }
}
