package io.reactiverdma.samples.bulk;

import java.net.InetSocketAddress;

/**
 * What a receiver reports about one transfer (one connection).
 *
 * @param peer              the sender's address
 * @param mode              push or pull (null when the sender never said)
 * @param expectedBytes     the size the sender announced (0 when it never said)
 * @param bytes             bytes received and consumed (hashed, and written to the output file if any)
 * @param sha256            SHA-256 of those bytes
 * @param elapsedNs         from the connection until the last byte was consumed (or the failure)
 * @param maxChunksInFlight the most ring slots that held unconsumed data at once (at most the window)
 * @param failure           why it failed; null when every byte arrived
 */
public record ReceiveReport(InetSocketAddress peer, TransferMode mode, long expectedBytes, long bytes, byte[] sha256,
                            long elapsedNs, int maxChunksInFlight, BulkTransferException failure) {
    public ReceiveReport {
        sha256 = sha256.clone();
    }

    @Override
    public byte[] sha256() {
        return sha256.clone();
    }

    public boolean succeeded() {
        return failure == null;
    }
}
