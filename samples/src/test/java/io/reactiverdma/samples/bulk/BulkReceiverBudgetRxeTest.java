package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A receiver pins chunk x window bytes (up to 64 MiB) per HELLO: without a limit, a few senders that only say
 * HELLO pin all the memory it can lock. Each connection here announces a 64 MiB ring and sends nothing more.
 */
@Tag(RxeTestSupport.TAG)
class BulkReceiverBudgetRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final BulkProtocol.Hello HUNGRY = new BulkProtocol.Hello(TransferMode.PUSH, 4 << 20, 16, 1L << 30);
    private final List<RdmaConnection> connections = new ArrayList<>();
    private BulkReceiver receiver;

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    @AfterEach
    void close() {
        connections.forEach(RdmaConnection::dispose);
        connections.forEach(c -> c.onDispose().block(WAIT));
        if (receiver != null) {
            receiver.close();
        }
    }

    /** Connects, says HELLO, returns the receiver's first answer. */
    private BulkProtocol.Message hello() {
        RdmaConnection c = BulkSender.client(RxeTestSupport.deviceAddress(), receiver.address().getPort(),
                HUNGRY.window(), WAIT).connectNow(WAIT);
        connections.add(c);
        return c.receive().next()
                .map(m -> {
                    try {
                        return BulkProtocol.decode(m.data());
                    } finally {
                        m.release();
                    }
                })
                .zipWith(c.send(BulkProtocol.encode(HUNGRY)).thenReturn(true), (m, sent) -> m)
                .block(WAIT);
    }

    @Test
    void sendersBeyondThePinnedMemoryBudgetAreRefusedUntilMemoryIsReleased() {
        receiver = BulkReceiver.start(RxeTestSupport.deviceAddress(), 0,
                new BulkReceiver.Config(null, Duration.ofSeconds(60), Duration.ZERO), WAIT,
                line -> System.out.println("  " + line), null, r -> { });
        long budget = 128L << 20; // the receiver's documented default budget
        assertEquals(budget, BulkReceiver.Config.DEFAULT_MAX_PINNED_BYTES);
        long ring = (long) HUNGRY.chunkSize() * HUNGRY.window();
        int fit = (int) (budget / ring);
        for (int i = 0; i < fit; i++) {
            assertInstanceOf(BulkProtocol.Advertise.class, hello(), "sender " + i + " within the budget");
        }
        BulkProtocol.Message refused = hello();
        BulkProtocol.Error error = assertInstanceOf(BulkProtocol.Error.class, refused,
                "sender " + fit + " would pin " + (fit + 1) * ring + " bytes, above " + budget);
        assertTrue(error.text().contains("pinned"), error.text());
        // One of the first goes away: its ring is released and a new sender fits again.
        RdmaConnection first = connections.remove(0);
        first.dispose();
        first.onDispose().block(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        BulkProtocol.Message again;
        do {
            again = hello();
        } while (!(again instanceof BulkProtocol.Advertise) && System.nanoTime() < deadline);
        assertInstanceOf(BulkProtocol.Advertise.class, again, "after a sender left");
    }
}
