package io.reactiverdma.samples.bulk;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/**
 * Where the sender's bytes come from: a stream of known length read chunk by chunk, at any offset. Reads may
 * block (a file): the sender calls them on a bounded elastic scheduler, one at a time, in offset order.
 */
public interface ChunkSource extends Closeable {
    /** The stream's length in bytes. */
    long size();

    /** Fills {@code dst} from its position to its limit with the bytes at {@code offset}; advances its position. */
    void read(long offset, ByteBuffer dst) throws IOException;

    /** For messages: what the bytes are ("generated stream", "file x"). */
    String describe();

    @Override
    default void close() throws IOException {
    }

    /** The bytes of {@code file}, whose length is taken now. */
    static ChunkSource file(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        long size;
        try {
            size = channel.size();
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return new ChunkSource() {
            @Override
            public long size() {
                return size;
            }

            @Override
            public void read(long offset, ByteBuffer dst) throws IOException {
                long at = offset;
                while (dst.hasRemaining()) {
                    int n = channel.read(dst, at);
                    if (n < 0) {
                        throw new IOException(file + " ended at byte " + at + ", but it had " + size
                                + " bytes when the transfer started");
                    }
                    at += n;
                }
            }

            @Override
            public String describe() {
                return "file " + file;
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }
}
