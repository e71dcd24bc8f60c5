package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IdlePeerProbeScenario} on rxe in one VM: the probe (a zero-length RDMA WRITE without an rkey) runs
 * against a live peer of this engine and against a plain rdma_cm peer (rdma-core's {@code rdma_server})
 * without disturbing either. What was sent is read from the device's own counter
 * ({@code hw_counters/sent_pkts}), so the probes are seen on the wire, not in the engine. A host cannot die
 * here: that part runs on the loopback device and on two VMs ({@code scripts/two-host-tests}).
 */
@Tag(RxeTestSupport.TAG)
class IdlePeerProbeRxeTest {
    private static final Duration INTERVAL = Duration.ofMillis(500);
    private final PeerProcesses processes = new PeerProcesses();
    private final RxeResources resources = new RxeResources();
    private IdlePeerProbeScenario scenario;

    @AfterEach
    void close() {
        try {
            if (scenario != null) {
                scenario.close();
            }
            resources.close();
        } finally {
            processes.close();
        }
    }

    /** Packets the rxe device sent so far (every QP of it: both sides of a connection in this VM). */
    private static long devicePacketsSent() {
        Long sent = RxeTestSupport.hwCounters().get("sent_pkts");
        if (sent == null) {
            throw new AssertionError("the device has no hw_counters/sent_pkts");
        }
        return sent;
    }

    @Test
    void aLiveIdlePeerIsProbedAndUndisturbed() {
        scenario = new IdlePeerProbeScenario(new RdmaEngine(), new RdmaEngine(), RxeResources.requireDevice(),
                RxeResources.WAIT, INTERVAL);
        scenario.aLiveIdlePeerIsProbedAndUndisturbed(IdlePeerProbeRxeTest::devicePacketsSent, 4);
    }

    /**
     * A plain rdma_cm peer (rdma_server: it posts one receive and blocks until a message comes) is probed
     * while idle; its QP acknowledges the zero-length WRITEs without an rkey, without a completion and
     * without touching its memory, and it then echoes our message and exits cleanly.
     */
    @Test
    void aPlainPeerIsProbedAndUndisturbed() throws Exception {
        String host = RxeResources.requireDevice();
        int port = 20000 + (int) ((ProcessHandle.current().pid() + 11) % 20000);
        Process server = processes.start("rdma_server", "-s", host, "-p", Integer.toString(port));
        RdmaClient client = RdmaClient.create().host(host).port(port).option(RdmaOption.IDLE_PROBE_INTERVAL, INTERVAL);
        RdmaConnection c = PeerProcesses.connectWhenListening(client, server, RxeResources.WAIT);
        resources.clients.add(c);
        long before = devicePacketsSent();
        long deadline = System.nanoTime() + INTERVAL.multipliedBy(20).toNanos();
        while (devicePacketsSent() - before < 4 && System.nanoTime() - deadline < 0) {
            Thread.sleep(INTERVAL.toMillis() / 4); // awaiting the counter (the probes), bounded
        }
        long sent = devicePacketsSent() - before;
        assertTrue(sent >= 4, "packets sent to an idle plain peer: " + sent + ", expected the probes (>= 4)");
        assertFalse(c.isDisposed(), "the probed connection to a plain peer stays open");
        byte[] text = "sixteen bytes!!!".getBytes(StandardCharsets.US_ASCII);
        StepVerifier.create(c.receive())
                .then(() -> c.send(ByteBuffer.wrap(text)).subscribe())
                .assertNext(m -> {
                    assertEquals(16, m.length());
                    m.release();
                })
                .expectComplete()
                .verify(RxeResources.WAIT);
        String out = PeerProcesses.finish(server, "rdma_server");
        assertEquals(0, server.exitValue(), "rdma_server failed:\n" + out);
    }
}
