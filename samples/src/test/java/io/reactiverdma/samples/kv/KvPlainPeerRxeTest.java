package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.impl.PlainPeer;
import io.reactiverdma.reactive.impl.verbs.jna.JnaRdmaStack;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A plain rdma_cm client (raw verbs, no private data, so no credits: what a C client written from
 * rdma-core's examples is) sends 50 PUT requests back to back to the key-value server, each as soon as the
 * previous response arrived. Issue 23 measured ~0.65 s per request (an RNR NAK at rdma_cm's 655 ms timer
 * each time); the server now keeps its receive window posted for plain peers and sets MIN_RNR_TIMER. The
 * time per request is printed (docs/flow-control.md, "Plain peers").
 */
@Tag(RxeTestSupport.TAG)
class KvPlainPeerRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private KvServer server;
    private PlainPeer peer;

    @AfterEach
    void close() {
        if (peer != null) {
            peer.close();
        }
        if (server != null) {
            server.disposeNow(WAIT);
        }
    }

    @Test
    void aPlainClientsRequestsRunBackToBackWithoutAnRnrWait() {
        RxeTestSupport.requireDevice();
        server = KvServer.bindNow(KvServerOptions.defaults(RxeTestSupport.deviceAddress()), WAIT, line -> { });
        // rnr_retry 6: the peer waits out RNR NAKs (the time then shows them) rather than failing
        peer = PlainPeer.connect(new JnaRdmaStack(), RxeTestSupport.deviceAddress(), server.address().getPort(), 6,
                4096, WAIT);
        peer.next(WAIT); // the table's layout, which the server sends first
        int n = 50;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            ByteBuffer request = KvProtocol.encode(KvProtocol.Request.putInline(i,
                    ("key-" + i).getBytes(StandardCharsets.UTF_8), ("value-" + i).getBytes(StandardCharsets.UTF_8)));
            byte[] bytes = new byte[request.remaining()];
            request.get(bytes);
            KvProtocol.Response r = KvProtocol.decodeResponse(ByteBuffer.wrap(peer.request(bytes, WAIT)));
            assertEquals(i, r.id(), "response id");
            assertEquals(KvProtocol.Status.OK, r.status(), r.toString());
        }
        double msPerRequest = (System.nanoTime() - start) / 1e6 / n;
        System.out.printf("plain peer, key-value server on rxe: %.3f ms per PUT (%d back to back)%n", msPerRequest, n);
        assertTrue(msPerRequest < 100, msPerRequest + " ms per request: an RNR wait at rdma_cm's 655 ms timer is in there");
    }
}
