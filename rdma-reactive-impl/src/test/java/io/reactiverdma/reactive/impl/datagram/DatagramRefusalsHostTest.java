package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.RdmaEngine;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What is refused before any device is touched, and what a stack without UD support (the loopback device)
 * answers: a typed error, with nothing left open.
 */
class DatagramRefusalsHostTest {
    @Test
    void bindWithoutAHostIsRefusedTyped() {
        StepVerifier.create(RdmaDatagram.create().bind())
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        ((InvalidRequestException) e).reason()))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aStackWithoutDatagramsFailsBindTypedAndLeavesNoIdOpen() {
        LoopbackStack stack = LoopbackStack.create();
        RdmaEngine engine = new RdmaEngine(stack);
        try {
            StepVerifier.create(engine.bindDatagram(RdmaDatagram.create().host("127.0.0.1").port(0).configuration()))
                    .expectErrorSatisfies(e -> {
                        assertEquals(RdmaException.class, e.getClass());
                        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("UDP"),
                                e.getMessage());
                    })
                    .verify(Duration.ofSeconds(10));
            assertEquals(java.util.List.of(), stack.liveIds(), "both rdma_cm ids were destroyed");
        } finally {
            engine.shutdown().block(Duration.ofSeconds(30));
        }
    }
}
