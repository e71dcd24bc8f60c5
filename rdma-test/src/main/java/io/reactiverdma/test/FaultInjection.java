package io.reactiverdma.test;

import io.reactiverdma.reactive.RdmaConnection;

import java.time.Duration;

/**
 * Faults injected into a started {@link LoopbackRdma}. Each applies to what happens after the call; none
 * changes what already happened.
 */
public interface FaultInjection {
    /** The next {@code count} datagrams (unicast, or a multicast group's copies) are lost on the wire. */
    void dropNextDatagrams(int count);

    /**
     * The next {@code count} connects (of any client) are held for {@code delay} once their route is
     * resolved, as a slow network would hold them; a connect timeout shorter than that fails them.
     */
    void delayNextConnects(Duration delay, int count);

    /**
     * The device refuses the next post of sends (of any connection) with ENOMEM, as a device out of resources
     * does; what the engine does then is documented in docs/failure-semantics.md.
     */
    void refuseNextSendPost();

    /** The device refuses the next post of receive buffers (of any connection) with ENOMEM. */
    void refuseNextReceivePost();

    /**
     * The host of {@code connection}'s end dies: it sends and answers nothing any more, its peer gets no
     * disconnect, so the peer's operations end in a retry-exceeded error after its retries (or its idle probe
     * finds the peer gone).
     *
     * @throws IllegalArgumentException when {@code connection} is not open on this device
     */
    void killHost(RdmaConnection connection);

    /** Forgets every fault injected and not yet taken effect. */
    void clear();
}
