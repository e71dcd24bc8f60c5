package io.reactiverdma.samples.rsocket;

import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code scripts/demo rsocket} end to end: the two Spring Boot applications, over RDMA on the loopback device and,
 * with the one property changed, over TCP.
 */
@Timeout(240)
class RSocketDemoHostTest {
    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    @Test
    void theClientApplicationCallsEveryInteractionOfTheServiceOverRdma() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = RSocketDemo.run(rdma.host(), false, new PrintStream(out, true, StandardCharsets.UTF_8));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(status).as(printed).isZero();
        assertThat(printed).contains("rsocket demo: OK over RDMA", "5000 items in order");
    }

    @Test
    void theSameApplicationsRunOverTcpWithTheTransportPropertyChanged() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = RSocketDemo.run("127.0.0.1", true, new PrintStream(out, true, StandardCharsets.UTF_8));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(status).as(printed).isZero();
        assertThat(printed).contains("rsocket demo: OK over TCP", "5000 items in order");
    }
}
