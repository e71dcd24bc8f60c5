package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link DatagramContract} on Soft-RoCE, and rdma-core's {@code udaddy} and {@code mckey} (rdmacm-utils) as
 * peers in both directions. The tools' tests are rxe only: the tools run against a real device, which the
 * loopback device is not.
 */
@Tag(RxeTestSupport.TAG)
class DatagramRxeTest extends DatagramContract {
    /** The port udaddy always uses. */
    private static final int UDADDY_PORT = 7174;

    private final List<Process> processes = new ArrayList<>();

    private final StackFixture stack = new RxeStackFixture(RxeResources.WAIT);

    @Override
    StackFixture stack() {
        return stack;
    }

    /** The tools started as peers (JUnit runs this before the contract closes the endpoints and the engine). */
    @AfterEach
    void stopTools() {
        processes.forEach(Process::destroyForcibly);
    }

    private RdmaDatagramEndpoint bind(int port) {
        return bind(RdmaDatagram.create().host(host).port(port));
    }

    // ---------------------------------------------------------------- rdma-core's tools as peers

    private Process start(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(p);
        return p;
    }

    /** Collects the tool's output; completes {@code line} when a line containing {@code marker} appears. */
    private static CompletableFuture<String> output(Process p, String marker, CompletableFuture<Void> line) {
        return CompletableFuture.supplyAsync(() -> {
            StringBuilder all = new StringBuilder();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String s;
                while ((s = r.readLine()) != null) {
                    all.append(s).append('\n');
                    if (marker != null && s.contains(marker)) {
                        line.complete(null);
                    }
                }
            } catch (IOException e) {
                all.append(e);
            }
            return all.toString();
        });
    }

    private static String finish(Process p, CompletableFuture<String> out, String what) throws Exception {
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(what + " did not finish within 60 s:\n" + out.getNow(""));
        }
        String s = out.get(10, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), what + " failed:\n" + s);
        return s;
    }

    /** udaddy's server answers SIDR, takes 10 datagrams and replies 10 times to the QPN their immediate names. */
    @Test
    void udaddyServerIsResolvedSentToAndRepliesToUs() throws Exception {
        Process server = start("udaddy", "-b", host);
        CompletableFuture<String> out = output(server, null, new CompletableFuture<>());
        RdmaDatagramEndpoint e = bind(0);
        Sinks.Many<RdmaDatagramMessage> got = Sinks.many().unicast().onBackpressureBuffer();
        subscriptions.add(e.receive().subscribe(got::tryEmitNext));
        InetSocketAddress udaddy = new InetSocketAddress(host, UDADDY_PORT);
        byte[] payload = new byte[100];
        for (int attempt = 0; ; attempt++) { // until udaddy listens
            try {
                e.send(ByteBuffer.wrap(payload), udaddy, e.qpNumber()).block(wait);
                break;
            } catch (RdmaConnectException notYet) {
                if (attempt > 40 || !server.isAlive()) {
                    fail("udaddy never answered: " + notYet + "\n" + out.getNow(""));
                }
                Thread.sleep(250);
            }
        }
        Flux.range(1, 9).concatMap(i -> e.send(ByteBuffer.wrap(payload), udaddy, e.qpNumber())).blockLast(wait);
        List<RdmaDatagramMessage> replies = got.asFlux().take(10).collectList().block(wait);
        for (RdmaDatagramMessage r : replies) {
            assertEquals(100, r.length());
            assertTrue(r.hasImmediate(), "udaddy sends with immediate data (its QPN)");
            assertEquals(r.immediate(), r.senderQpNumber());
            r.release();
        }
        finish(server, out, "udaddy server");
    }

    /** udaddy's client resolves us through SIDR, sends 10 datagrams and waits for 10 replies. */
    @Test
    void udaddyClientResolvesUsAndGetsReplies() throws Exception {
        RdmaDatagramEndpoint e = bind(UDADDY_PORT);
        subscriptions.add(e.receive().flatMap(d -> {
            byte[] echo = d.toByteArray();
            return e.reply(d, ByteBuffer.wrap(echo), e.qpNumber()).doFinally(s -> d.release());
        }).subscribe());
        Process client = start("udaddy", "-s", host, "-b", host);
        finish(client, output(client, null, new CompletableFuture<>()), "udaddy client");
        assertEquals(0, e.droppedCount());
    }

    /** mckey as receiver: joins, waits 3 s, expects 10 datagrams of 100 bytes; we join and send them. */
    @Test
    void mckeyReceivesWhatWeSendToTheGroup() throws Exception {
        InetSocketAddress group = new InetSocketAddress("239.8.8.8", 0);
        // Line-buffered: mckey's "joined" line must reach us before it exits.
        Process receiver = start("stdbuf", "-oL", "mckey", "-m", "239.8.8.8", "-b", host);
        CompletableFuture<Void> joined = new CompletableFuture<>();
        CompletableFuture<String> out = output(receiver, "joined", joined);
        RdmaDatagramEndpoint e = bind(0);
        subscriptions.add(e.join(group).subscribe(RdmaDatagramMessage::release));
        e.joined(group).block(wait);
        joined.get(60, TimeUnit.SECONDS);
        Thread.sleep(1000); // mckey posts its receives before joining; give its join the moment to attach
        Flux.range(0, 10).concatMap(i -> e.send(ByteBuffer.allocate(100), group, e.qpNumber())).blockLast(wait);
        String s = finish(receiver, out, "mckey receiver");
        assertTrue(s.contains("data transfers complete"), s);
    }

    /** mckey as sender (-s): joins, waits 3 s, sends 10 datagrams of 100 bytes; we receive them on the group. */
    @Test
    void weReceiveWhatMckeySendsToTheGroup() throws Exception {
        InetSocketAddress group = new InetSocketAddress("239.8.8.9", 0);
        RdmaDatagramEndpoint e = bind(0);
        Sinks.Many<RdmaDatagramMessage> got = Sinks.many().unicast().onBackpressureBuffer();
        subscriptions.add(e.join(group).subscribe(got::tryEmitNext));
        e.joined(group).block(wait);
        Process sender = start("mckey", "-m", "239.8.8.9", "-b", host, "-s");
        CompletableFuture<String> out = output(sender, null, new CompletableFuture<>());
        List<RdmaDatagramMessage> all = got.asFlux().take(10).collectList().block(wait);
        for (RdmaDatagramMessage d : all) {
            assertEquals(100, d.length());
            assertEquals(group.getAddress(), d.group().getAddress());
            assertEquals(d.immediate(), d.senderQpNumber(), "mckey sends its QPN as immediate data");
            d.release();
        }
        finish(sender, out, "mckey sender");
    }
}
