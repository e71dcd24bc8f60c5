package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Value blocks of server-side READs (PUT_REMOTE) on a table of plain buffers: a client that pipelines a
 * large PUT and disconnects cancels the READ; its block must come back once the connection is closed, or a
 * few such clients fill the value area until the server restarts.
 */
class BlockReadTest {
    private final KvLayout layout = KvCodecTest.layout(64, 8); // 64 KiB value area
    private final AtomicLong clockNs = new AtomicLong();
    private final KvTable table = new KvTable(layout, ByteBuffer.allocateDirect((int) layout.table().length()),
            ByteBuffer.allocateDirect(32), 100, clockNs::get);
    private final AtomicLong heldBack = new AtomicLong();

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aReadCancelledByAClosingConnectionReturnsItsBlockOnceTheConnectionIsClosed() {
        int length = 8 * 1024; // a 16 KiB block: four fill the area
        for (int round = 0; round < 12; round++) {
            long block = table.reserve(key(round), length);
            Sinks.Empty<Void> closed = Sinks.empty();
            Disposable put = BlockRead.readThenPublish(table, key(round), length, block, Mono.never(),
                    closed.asMono(), heldBack).subscribe();
            put.dispose();              // the connection closing cancels the request's handling
            closed.tryEmitEmpty();      // then its QP is destroyed: the device is done with the block
            clockNs.addAndGet(Duration.ofMillis(1).toNanos());
        }
        assertEquals(12, heldBack.get());
        assertEquals(0, table.valueBytesInUse());
        // The area is whole again: four 16 KiB values fit.
        for (int i = 0; i < 4; i++) {
            table.publishBlock(key(100 + i), length, table.reserve(key(100 + i), length));
        }
    }

    @Test
    void aBlockIsNotReusedWhileItsConnectionIsStillClosing() {
        int length = 8 * 1024;
        Sinks.Empty<Void> closed = Sinks.empty();
        for (int i = 0; i < 4; i++) {
            long block = table.reserve(key(i), length);
            BlockRead.readThenPublish(table, key(i), length, block, Mono.never(), closed.asMono(), heldBack)
                    .subscribe().dispose();
        }
        clockNs.addAndGet(Duration.ofSeconds(1).toNanos());
        // The device may still write those four blocks: nothing is free.
        KvException full = assertThrows(KvException.class, () -> table.reserve(key(9), length));
        assertEquals(KvException.Reason.VALUE_AREA_FULL, full.reason());
        closed.tryEmitEmpty();
        clockNs.addAndGet(Duration.ofSeconds(1).toNanos());
        table.reserve(key(9), length);
    }
}
