package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaResources;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.verbs.AsyncEventType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Two engines side by side through the public API ({@code runOn(engine)}, and {@code RdmaResources}' forms
 * that take the engine), with no static selection: each on its own loopback device, each with a server on the
 * same port answering its own clients only. (On the
 * machine's devices two engines would share the kernel's rdma_cm port space, so this is a loopback test.)
 */
@Timeout(60)
class RunOnLoopbackTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final int PORT = 7700;

    private final LoopbackStack stackA = LoopbackStack.create();
    private final LoopbackStack stackB = LoopbackStack.create();
    private final RdmaEngine engineA = new RdmaEngine(stackA);
    private final RdmaEngine engineB = new RdmaEngine(stackB);

    @AfterEach
    void close() {
        try {
            engineA.shutdown().block(WAIT);
            engineB.shutdown().block(WAIT);
        } finally {
            stackA.close();
            stackB.close();
        }
    }

    /** A server on {@code engine} that answers every message with {@code name}. */
    private static DisposableRdmaServer answering(RdmaEngine engine, String name) {
        return RdmaServer.create().runOn(engine).host("127.0.0.1").port(PORT)
                .handle(conn -> conn.send(conn.receive(m -> ByteBuffer.wrap(name.getBytes(StandardCharsets.UTF_8)))))
                .bindNow(WAIT);
    }

    private static String ask(RdmaEngine engine) {
        RdmaConnection conn = RdmaClient.create().runOn(engine).host("127.0.0.1").port(PORT).connectNow(WAIT);
        try {
            Mono<String> reply = conn.receive(m -> new String(m.toByteArray(), StandardCharsets.UTF_8)).next();
            return Mono.zip(reply, conn.send(ByteBuffer.wrap(new byte[] {1})).thenReturn(true))
                    .map(t -> t.getT1()).block(WAIT);
        } finally {
            conn.dispose();
            conn.onDispose().block(WAIT);
        }
    }

    @Test
    void twoEnginesEachServeTheirOwnClientsOnTheSamePort() {
        DisposableRdmaServer a = answering(engineA, "A");
        DisposableRdmaServer b = answering(engineB, "B");
        assertEquals(PORT, a.port());
        assertEquals(PORT, b.port());
        assertEquals("A", ask(engineA));
        assertEquals("B", ask(engineB));
        a.disposeNow(WAIT);
        b.disposeNow(WAIT);
    }

    @Test
    void shuttingOneEngineDownLeavesTheOtherServing() {
        answering(engineA, "A");
        answering(engineB, "B");
        StepVerifier.create(engineA.shutdown()).expectComplete().verify(WAIT);
        assertEquals("B", ask(engineB));
    }

    private static RdmaConnection connected(RdmaEngine engine) {
        return RdmaClient.create().runOn(engine).host("127.0.0.1").port(PORT).connectNow(WAIT);
    }

    private static void close(RdmaConnection conn) {
        conn.dispose();
        conn.onDispose().block(WAIT);
    }

    @Test
    void theDeviceMemoryOfAnEngineIsTheMemoryItsConnectionsUse() {
        answering(engineA, "A");
        RdmaMemory memory = RdmaResources.memory(engineA, "127.0.0.1").block(WAIT);
        assertNotNull(memory);
        RdmaConnection conn = connected(engineA);
        try {
            assertSame(memory, conn.memory(), "one protection domain per device and engine");
        } finally {
            close(conn);
        }
    }

    @Test
    void theDeviceEventsOfAnEngineAreThoseOfItsDevices() {
        answering(engineA, "A");
        assertEquals("A", ask(engineA)); // engine A opens the device when it first connects through it
        StepVerifier.create(RdmaResources.deviceEvents(engineA).next())
                .then(() -> stackA.faults().raisePortEvent(stackA.device("loopback0"), AsyncEventType.PORT_ERR, 1))
                .expectNext(new DeviceEvent("loopback0", DeviceEvent.Type.PORT_ERROR, 1))
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void disposeLaterOfAnEngineClosesThatEnginesConnectionsOnly() {
        answering(engineA, "A");
        answering(engineB, "B");
        RdmaConnection a = connected(engineA);
        RdmaConnection b = connected(engineB);
        try {
            StepVerifier.create(RdmaResources.disposeLater(engineA)).expectComplete().verify(WAIT);
            StepVerifier.create(a.onDispose()).expectComplete().verify(WAIT);
            assertFalse(b.isDisposed(), "engine B's connection stays open");
            assertEquals("B", ask(engineB));
        } finally {
            close(b);
        }
    }
}
