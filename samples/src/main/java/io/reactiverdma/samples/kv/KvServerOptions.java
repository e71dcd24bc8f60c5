package io.reactiverdma.samples.kv;

import io.reactiverdma.samples.common.ServerLimits;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link KvServer} is set up. Immutable; {@link #defaults(String)} then the {@code with...} methods.
 *
 * @param host            a local address of an RDMA device's netdev
 * @param port            rdma_cm port, 0 for any free one
 * @param slotCount       slots in the table (entries it can hold, less what probing leaves free)
 * @param slotSize        bytes per slot: header, key and inline value (a multiple of 8)
 * @param keyMaxBytes     the longest key (UTF-8 bytes)
 * @param maxProbe        slots a key may be placed in from its home slot: what a GET of an absent key reads
 *                        at most
 * @param maxValueBytes   the largest value
 * @param valueAreaBytes  bytes for values that do not fit in their slot
 * @param counterCount    counter words
 * @param maxMessageBytes the server's receive buffer size: PUTs whose key and value fit travel in the
 *                        message, larger ones are RDMA READ by the server
 * @param blockReuseDelay how long a freed value block rests before it is reused (while the area has
 *                        never-used space): a client still reading the old value then finishes unharmed
 *                        instead of reading again
 * @param limits          the engine's server options it binds with (shared receive queue, connection limit,
 *                        accept timeout, idle probe)
 */
public record KvServerOptions(String host, int port, int slotCount, int slotSize, int keyMaxBytes, int maxProbe,
                              int maxValueBytes, long valueAreaBytes, int counterCount, int maxMessageBytes,
                              Duration blockReuseDelay, ServerLimits limits) {
    public static final int DEFAULT_SLOT_COUNT = 4096;
    public static final int DEFAULT_SLOT_SIZE = 256;
    public static final int DEFAULT_KEY_MAX_BYTES = 64;
    public static final int DEFAULT_MAX_PROBE = 32;
    public static final int DEFAULT_MAX_VALUE_BYTES = 4 << 20;
    public static final long DEFAULT_VALUE_AREA_BYTES = 32L << 20;
    public static final int DEFAULT_COUNTER_COUNT = 1024;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 4096;
    public static final Duration DEFAULT_BLOCK_REUSE_DELAY = Duration.ofMillis(100);

    public KvServerOptions {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(blockReuseDelay, "blockReuseDelay");
        Objects.requireNonNull(limits, "limits");
        if (blockReuseDelay.isNegative()) {
            throw illegal("blockReuseDelay must be >= 0, got " + blockReuseDelay);
        }
        check("port", port, 0, 65535);
        check("slotCount", slotCount, 1, 1 << 24);
        check("slotSize", slotSize, SlotCodec.HEADER_BYTES + 8, 1 << 16);
        if (slotSize % 8 != 0) {
            throw illegal("slotSize must be a multiple of 8, got " + slotSize);
        }
        check("keyMaxBytes", keyMaxBytes, 1, Math.min(65535, slotSize - SlotCodec.HEADER_BYTES));
        check("maxProbe", maxProbe, 1, slotCount);
        check("maxValueBytes", maxValueBytes, 0, Integer.MAX_VALUE);
        check("valueAreaBytes", valueAreaBytes, 0, Integer.MAX_VALUE);
        check("counterCount", counterCount, 0, 1 << 20);
        check("maxMessageBytes", maxMessageBytes, 64, 4 << 20);
        long tableBytes = (long) slotCount * slotSize + valueAreaBytes;
        if (tableBytes > Integer.MAX_VALUE) {
            throw illegal("slots and value area take " + tableBytes + " bytes; at most " + Integer.MAX_VALUE);
        }
        if (maxValueBytes > slotSize - SlotCodec.HEADER_BYTES - keyMaxBytes
                && KvTable.blockSize(maxValueBytes) > valueAreaBytes) {
            throw illegal("the largest value (" + maxValueBytes + " bytes, a " + KvTable.blockSize(maxValueBytes)
                    + "-byte block) does not fit the " + valueAreaBytes + "-byte value area");
        }
    }

    /** The defaults (see the constants) on {@code host}, port 0. */
    public static KvServerOptions defaults(String host) {
        return new KvServerOptions(host, 0, DEFAULT_SLOT_COUNT, DEFAULT_SLOT_SIZE, DEFAULT_KEY_MAX_BYTES,
                DEFAULT_MAX_PROBE, DEFAULT_MAX_VALUE_BYTES, DEFAULT_VALUE_AREA_BYTES, DEFAULT_COUNTER_COUNT,
                DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_BLOCK_REUSE_DELAY, ServerLimits.DEFAULTS);
    }

    public KvServerOptions withPort(int port) {
        return new KvServerOptions(host, port, slotCount, slotSize, keyMaxBytes, maxProbe, maxValueBytes,
                valueAreaBytes, counterCount, maxMessageBytes, blockReuseDelay, limits);
    }

    public KvServerOptions withTable(int slotCount, int maxProbe) {
        return new KvServerOptions(host, port, slotCount, slotSize, keyMaxBytes, maxProbe, maxValueBytes,
                valueAreaBytes, counterCount, maxMessageBytes, blockReuseDelay, limits);
    }

    public KvServerOptions withValues(int maxValueBytes, long valueAreaBytes) {
        return new KvServerOptions(host, port, slotCount, slotSize, keyMaxBytes, maxProbe, maxValueBytes,
                valueAreaBytes, counterCount, maxMessageBytes, blockReuseDelay, limits);
    }

    public KvServerOptions withCounterCount(int counterCount) {
        return new KvServerOptions(host, port, slotCount, slotSize, keyMaxBytes, maxProbe, maxValueBytes,
                valueAreaBytes, counterCount, maxMessageBytes, blockReuseDelay, limits);
    }

    public KvServerOptions withBlockReuseDelay(Duration blockReuseDelay) {
        return new KvServerOptions(host, port, slotCount, slotSize, keyMaxBytes, maxProbe, maxValueBytes,
                valueAreaBytes, counterCount, maxMessageBytes, blockReuseDelay, limits);
    }

    public KvServerOptions withLimits(ServerLimits limits) {
        return new KvServerOptions(host, port, slotCount, slotSize, keyMaxBytes, maxProbe, maxValueBytes,
                valueAreaBytes, counterCount, maxMessageBytes, blockReuseDelay, limits);
    }

    /** The table's bytes: slots then value area. */
    long tableBytes() {
        return (long) slotCount * slotSize + valueAreaBytes;
    }

    private static void check(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw illegal(name + " must be " + min + ".." + max + ", got " + value);
        }
    }

    private static KvException illegal(String message) {
        return new KvException(KvException.Reason.ILLEGAL_ARGUMENT, message);
    }
}
