package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * rdma-core's C example programs (rdma_client, rdma_server) run as peers by rxe tests: started, awaited with
 * their output, and killed by {@link #close()} if a test left one running.
 */
final class PeerProcesses implements AutoCloseable {
    private final List<Process> processes = new CopyOnWriteArrayList<>();

    Process start(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(p);
        return p;
    }

    /** Waits at most 60 s for {@code p} to exit; its output. */
    static String finish(Process p, String what) throws Exception {
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(what + " did not finish within 60 s");
        }
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }

    /** Connects with {@code client} once the {@code rdma_server} just started listens (retrying for 10 s). */
    static RdmaConnection connectWhenListening(RdmaClient client, Process server, Duration wait) throws Exception {
        RdmaConnection c = null;
        for (int attempt = 0; attempt < 40 && c == null; attempt++) {
            try {
                c = client.connectNow(wait);
            } catch (RdmaConnectException notYetListening) {
                if (!server.isAlive()) {
                    fail("rdma_server exited: " + finish(server, "rdma_server"));
                }
                Thread.sleep(250);
            }
        }
        assertNotNull(c, "rdma_server never accepted");
        return c;
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
    }
}
