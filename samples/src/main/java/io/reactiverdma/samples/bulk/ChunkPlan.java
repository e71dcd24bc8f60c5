package io.reactiverdma.samples.bulk;

/**
 * How a stream of {@code totalBytes} is cut into chunks of {@code chunkSize} bytes: all full, except the last,
 * which holds the rest. Chunk {@code seq} starts at {@code seq * chunkSize}.
 *
 * @param totalBytes the stream's length, >= 0
 * @param chunkSize  bytes per chunk, >= 1
 */
public record ChunkPlan(long totalBytes, int chunkSize) {
    public ChunkPlan {
        if (totalBytes < 0) {
            throw new IllegalArgumentException("totalBytes must be >= 0, got " + totalBytes);
        }
        if (chunkSize < 1) {
            throw new IllegalArgumentException("chunkSize must be >= 1, got " + chunkSize);
        }
    }

    /** The number of chunks: 0 for an empty stream. */
    public long chunkCount() {
        return totalBytes / chunkSize + (totalBytes % chunkSize == 0 ? 0 : 1);
    }

    /** Where chunk {@code seq} starts in the stream. */
    public long offset(long seq) {
        check(seq);
        return seq * chunkSize;
    }

    /** The length of chunk {@code seq}: {@code chunkSize}, or less for the last one. */
    public int length(long seq) {
        check(seq);
        return (int) Math.min(chunkSize, totalBytes - seq * chunkSize);
    }

    private void check(long seq) {
        if (seq < 0 || seq >= chunkCount()) {
            throw new IndexOutOfBoundsException("chunk " + seq + " of " + chunkCount());
        }
    }
}
