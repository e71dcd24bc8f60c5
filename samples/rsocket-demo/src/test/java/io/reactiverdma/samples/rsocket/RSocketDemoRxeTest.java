package io.reactiverdma.samples.rsocket;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.logging.LoggingSystem;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code scripts/demo rsocket} end to end on a real RDMA device (rxe in the VM): the greeting service's
 * {@code @MessageMapping} endpoints over RDMA on the device's address, called by the client application's
 * {@code RSocketRequester} (request-response, a request-stream of 5,000 items read 256 at a time, a channel),
 * every answer checked. The same run as {@link RSocketDemoHostTest}'s, on the kernel's RDMA stack.
 */
@Tag(RxeTestSupport.TAG)
class RSocketDemoRxeTest {
    @Test
    void theClientApplicationCallsEveryInteractionOfTheServiceOverRxe() {
        RxeTestSupport.requireDevice();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        // The device run has every module's test class path in one JVM: SLF4J binds to slf4j-jdk14 (another
        // module's test dependency) while Logback is there too, and Spring Boot's Logback logging system then
        // refuses to start ("LoggerFactory is not a Logback LoggerContext"). Boot's own logging system is not
        // what this test is about: none.
        String loggingSystem = System.setProperty(LoggingSystem.SYSTEM_PROPERTY, LoggingSystem.NONE);
        int status;
        try {
            status = RSocketDemo.run(RxeTestSupport.deviceAddress(), false,
                    new PrintStream(out, true, StandardCharsets.UTF_8));
        } finally {
            if (loggingSystem == null) {
                System.clearProperty(LoggingSystem.SYSTEM_PROPERTY);
            } else {
                System.setProperty(LoggingSystem.SYSTEM_PROPERTY, loggingSystem);
            }
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        System.out.print(printed);
        System.out.println("  rsocket demo on rxe: both applications started, called and closed in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
        assertThat(status).as(printed).isZero();
        assertThat(printed).contains("rsocket demo: OK over RDMA", "5000 items in order");
    }
}
