package io.reactiverdma.reactive;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * An acceptor's answer to a {@link ConnectRequest}: accept, optionally with private data for the client
 * (it reads it with {@link RdmaConnection#peerPrivateData()}), or reject with a reason the client reads in
 * {@link ConnectionRejectedException#serverReason()}. Sizes are checked here, when the answer is made, so
 * nothing is sent that the CM cannot carry.
 */
public final class Admission {
    /**
     * The most private data an accept carries for the client's application: the 196 bytes of an IB/RoCE CM
     * reply, less the engine's 24-byte negotiation.
     */
    public static final int MAX_ACCEPT_PRIVATE_DATA = 172;
    /**
     * The longest reject reason, in UTF-8 bytes: the 148 bytes of an IB/RoCE CM reject, less the engine's
     * 8-byte reject header.
     */
    public static final int MAX_REJECT_REASON = 140;

    private static final Admission ACCEPT = new Admission(true, new byte[0], null);

    private final boolean accepted;
    private final byte[] privateData;
    private final String reason;

    private Admission(boolean accepted, byte[] privateData, String reason) {
        this.accepted = accepted;
        this.privateData = privateData;
        this.reason = reason;
    }

    /** Accept without private data. */
    public static Admission accept() {
        return ACCEPT;
    }

    /**
     * Accept, sending {@code privateData} (copied) to the client.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#PRIVATE_DATA_TOO_LARGE}) when it
     *                                 is longer than {@link #MAX_ACCEPT_PRIVATE_DATA}
     */
    public static Admission accept(byte[] privateData) {
        Objects.requireNonNull(privateData, "privateData");
        if (privateData.length > MAX_ACCEPT_PRIVATE_DATA) {
            throw new InvalidRequestException(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE,
                    "accept private data is " + privateData.length + " bytes; at most " + MAX_ACCEPT_PRIVATE_DATA
                            + " fit (196 of the CM reply less 24 of the engine's negotiation)");
        }
        return new Admission(true, privateData.clone(), null);
    }

    /**
     * Reject, telling the client {@code reason}.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#PRIVATE_DATA_TOO_LARGE}) when its
     *                                 UTF-8 form is longer than {@link #MAX_REJECT_REASON} bytes
     */
    public static Admission reject(String reason) {
        Objects.requireNonNull(reason, "reason");
        int n = reason.getBytes(StandardCharsets.UTF_8).length;
        if (n > MAX_REJECT_REASON) {
            throw new InvalidRequestException(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE,
                    "reject reason is " + n + " UTF-8 bytes; at most " + MAX_REJECT_REASON + " fit");
        }
        return new Admission(false, new byte[0], reason);
    }

    /** True for an accept. */
    public boolean isAccepted() {
        return accepted;
    }

    /** The accept's private data for the client (a copy; empty for none and for a reject). */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** The reject's reason; null for an accept. */
    public String reason() {
        return reason;
    }

    @Override
    public String toString() {
        return accepted ? "Admission{accept, " + privateData.length + " bytes}" : "Admission{reject: " + reason + "}";
    }
}
