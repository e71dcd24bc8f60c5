package io.reactiverdma.samples.gateway;

import io.reactiverdma.spring.autoconfigure.RdmaConnectionHandler;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real application start that fails for want of RDMA (the host has no device): the gateway with an RDMA
 * server enabled. Spring Boot's failure report is the RDMA failure analyzer's, with the action to take, as a
 * user sees it on the console; the report is also written to target/rdma-failure-report.txt (what
 * docs/troubleshooting.md shows).
 */
class RdmaFailureReportHostTest {
    /** How Spring Boot's console pattern abbreviates LoggingFailureAnalysisReporter's logger name. */
    private static final String REPORTER_SHORT = "o.s.b.d.LoggingFailureAnalysisReporter";

    @Configuration(proxyBeanMethods = false)
    static class EchoHandler {
        @Bean
        RdmaConnectionHandler echo() {
            return conn -> conn.receive().then();
        }
    }

    @Test
    void noRdmaOnTheHostIsReportedWithTheActionToTake() throws IOException {
        // The console as the user sees it: Spring Boot's logging set-up (re)creates the console appender during
        // the start, on whatever System.out is then, so this captures it (and still prints it).
        PrintStream console = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(new TeeOutputStream(console, captured), true, StandardCharsets.UTF_8));
        try {
            assertThrows(RuntimeException.class, () -> new SpringApplicationBuilder(GatewayApplication.class,
                    EchoHandler.class).run("--server.port=0", "--spring.main.banner-mode=off",
                    "--reactive-rdma.client.host=10.77.0.1", "--reactive-rdma.server.enabled=true",
                    "--reactive-rdma.server.host=10.77.0.1", "--reactive-rdma.server.port=7471"));
        } finally {
            System.setOut(console);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        int at = out.indexOf(REPORTER_SHORT);
        assertTrue(at >= 0, "no failure report on the console:\n" + out);
        String text = out.substring(out.lastIndexOf('\n', at) + 1);
        Files.writeString(Path.of("target", "rdma-failure-report.txt"), text);
        assertTrue(text.contains("APPLICATION FAILED TO START"), text);
        assertTrue(text.contains("RDMA cannot be used: "), text);
        assertTrue(text.contains("Action:"), text);
    }

    /** Writes to two streams. */
    private static final class TeeOutputStream extends OutputStream {
        private final OutputStream a;
        private final OutputStream b;

        TeeOutputStream(OutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int x) throws IOException {
            a.write(x);
            b.write(x);
        }

        @Override
        public void write(byte[] buf, int off, int len) throws IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public void flush() throws IOException {
            a.flush();
            b.flush();
        }
    }
}
