package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.cm.CmEventType;

import reactor.util.annotation.Nullable;

/**
 * One rdma_cm event, copied out and acknowledged.
 *
 * @param type        what happened
 * @param status      0, a negative errno, or for REJECTED the CM's reject reason
 * @param id          the id it concerns; for CONNECT_REQUEST a new id the receiver owns (accept, reject or close it)
 * @param listenId    for CONNECT_REQUEST the listening id, else null
 * @param privateData the peer's private data, possibly zero-padded by the CM; empty when none
 * @param datagram    on the UDP port space, ESTABLISHED's and MULTICAST_JOIN's destination, else null
 */
public record CmEventInfo(CmEventType type, int status, CmId id, @Nullable CmId listenId, byte[] privateData,
                          @Nullable DatagramRoute datagram) {
    /** An event that carries no datagram destination. */
    public CmEventInfo(CmEventType type, int status, CmId id, @Nullable CmId listenId, byte[] privateData) {
        this(type, status, id, listenId, privateData, null);
    }

    /** The private data without the CM's zero padding at its end. */
    public byte[] privateDataTrimmed() {
        int n = privateData.length;
        while (n > 0 && privateData[n - 1] == 0) {
            n--;
        }
        return java.util.Arrays.copyOf(privateData, n);
    }

    @Override
    public String toString() {
        return type + "(status " + status + ") on " + id.description();
    }
}
