package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Whether rxe raises {@code IBV_EVENT_QP_LAST_WQE_REACHED} for a QP on a shared receive queue that goes to
 * ERR. The engine destroys a closing SRQ connection's QP only after that event (and a CQ drain), or after a
 * bounded wait without it ({@code SharedReceives.LAST_WQE_WAIT}, 2 s), which it logs at DEBUG ("no
 * QP_LAST_WQE_REACHED within ..."). Observed on the VM's rxe (kernel 6.1): the event never comes, so every
 * SRQ close waits the bound; the QP is still destroyed and the connection counted out. The test closes SRQ
 * connections from either side and asserts exactly that: if a kernel's rxe starts raising the event, it fails,
 * and the wait (and docs/server-guide.md) should be revisited.
 */
@Tag(RxeTestSupport.TAG)
class SharedReceiveLastWqeRxeTest {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String NO_EVENT = "no QP_LAST_WQE_REACHED";

    private final RxeResources resources = new RxeResources();
    /** Held strongly: java.util.logging keeps loggers weakly, and the level set here would be lost. */
    private final Logger engineLog = Logger.getLogger("io.reactiverdma.reactive.impl");
    private final List<String> debug = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            debug.add(String.valueOf(r.getMessage()));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private Level previous;

    @AfterEach
    void close() {
        try {
            resources.close();
        } finally {
            engineLog.removeHandler(capture);
            engineLog.setLevel(previous);
        }
    }

    @Test
    void rxeRaisesNoLastWqeReachedSoEachClosedSrqConnectionWaitsTheBoundBeforeItsQpIsDestroyed() {
        String host = RxeResources.requireDevice();
        previous = engineLog.getLevel();
        engineLog.setLevel(Level.ALL);
        engineLog.addHandler(capture);
        DisposableRdmaServer server = RdmaServer.create().host(host).port(0)
                .option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 16)
                .handle(c -> c.send(c.receive().take(1).map(m -> {
                    ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
                    m.release();
                    return copy;
                })).then(c.receive().take(1).doOnNext(m -> {
                    m.release();
                    c.dispose(); // the second message asks the server side to close
                }).then()))
                .bindNow(WAIT);
        resources.servers.add(server);
        int connections = 3;
        for (int i = 0; i < connections; i++) {
            RdmaConnection c = RdmaClient.create().host(host).port(server.port()).connectNow(WAIT);
            assertNotNull(c);
            resources.clients.add(c);
            c.send(ByteBuffer.wrap(new byte[] {1, 2, 3})).block(WAIT);
            assertEquals(3, c.receive().next().map(m -> {
                int n = m.length();
                m.release();
                return n;
            }).block(WAIT), "echo of connection " + i);
            if (i % 2 == 0) {
                c.dispose(); // the client closes
            } else {
                c.send(ByteBuffer.wrap(new byte[] {9})).block(WAIT); // the server closes
            }
            c.onDispose().block(WAIT);
        }
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.connectionCount() != 0 && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertEquals(0, server.connectionCount(), "the server's connections closed");
        long closedAt = System.nanoTime();
        // Past the engine's bound (2 s) with margin for emulation: each close logs its run-out wait by then.
        long until = closedAt + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() - until < 0 && debug.stream().filter(m -> m.contains(NO_EVENT)).count() < connections) {
            try {
                Thread.sleep(50); // polling for a log line, not synchronising with the engine
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        List<String> timedOut = debug.stream().filter(m -> m.contains(NO_EVENT)).toList();
        System.out.println("LAST-WQE rxe: " + connections + " SRQ connections closed, bounded waits run out: "
                + timedOut.size() + " " + timedOut);
        assertEquals(connections, timedOut.size(), "closes whose QP waited the bound for QP_LAST_WQE_REACHED "
                + "(fewer: rxe raised the event for some): " + timedOut);
    }
}
