package io.reactiverdma.samples.bulk;

import java.util.Arrays;

/**
 * What a sender reports once the receiver answered.
 *
 * @param mode              push or pull
 * @param bytes             bytes sent
 * @param sha256            SHA-256 of the bytes sent
 * @param receiverBytes     bytes the receiver says it got
 * @param receiverSha256    SHA-256 of what the receiver got
 * @param elapsedNs         from the start until the receiver's answer
 * @param maxChunksInFlight the most chunks that were in flight at once (at most the window)
 */
public record SendReport(TransferMode mode, long bytes, byte[] sha256, long receiverBytes, byte[] receiverSha256,
                         long elapsedNs, int maxChunksInFlight) {
    public SendReport {
        sha256 = sha256.clone();
        receiverSha256 = receiverSha256.clone();
    }

    @Override
    public byte[] sha256() {
        return sha256.clone();
    }

    @Override
    public byte[] receiverSha256() {
        return receiverSha256.clone();
    }

    /** True when the receiver got as many bytes as were sent, with the same SHA-256. */
    public boolean hashesMatch() {
        return bytes == receiverBytes && Arrays.equals(sha256, receiverSha256);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SendReport r && r.mode == mode && r.bytes == bytes && Arrays.equals(r.sha256, sha256)
                && r.receiverBytes == receiverBytes && Arrays.equals(r.receiverSha256, receiverSha256)
                && r.elapsedNs == elapsedNs && r.maxChunksInFlight == maxChunksInFlight;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(sha256) * 31 + Long.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "SendReport[" + mode.label() + ", " + bytes + " bytes, sha256 " + Hashing.hex(sha256) + ", receiver "
                + receiverBytes + " bytes, sha256 " + Hashing.hex(receiverSha256) + ", " + elapsedNs / 1_000_000
                + " ms, max in flight " + maxChunksInFlight + "]";
    }
}
