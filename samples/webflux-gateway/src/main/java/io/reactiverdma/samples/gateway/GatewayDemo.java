package io.reactiverdma.samples.gateway;

import io.reactiverdma.samples.common.DeviceAddress;
import io.reactiverdma.samples.kv.KvServer;
import io.reactiverdma.samples.kv.KvServerOptions;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * {@code scripts/demo gateway}: everything in one JVM on this machine's RDMA device. Starts a key-value
 * server on the device's address, starts the gateway application pointed at it (only through
 * {@code reactive-rdma.client.*} properties), sends real HTTP requests to the gateway with the JDK's HTTP
 * client and prints each request and response, then shuts the gateway down and shows that the key-value
 * server saw its RDMA connection close. Extra arguments go to Spring ({@code --server.port=8080} ...).
 */
public final class GatewayDemo {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private GatewayDemo() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out));
    }

    static int run(String[] args, PrintStream out) throws IOException, InterruptedException {
        DeviceAddress device = DeviceAddress.find();
        out.println("gateway demo: RDMA device " + device);
        KvServer kv = KvServer.bindNow(KvServerOptions.defaults(device.host()).withPort(0), WAIT,
                line -> out.println("  kv server: " + line));
        ConfigurableApplicationContext app = null;
        try {
            out.println("gateway demo: key-value server listening on " + device.host() + ":" + kv.address().getPort()
                    + " (rdma_cm)");
            List<String> springArgs = new ArrayList<>(List.of("--server.port=0",
                    "--reactive-rdma.client.host=" + device.host(),
                    "--reactive-rdma.client.port=" + kv.address().getPort(),
                    // In the Soft-RoCE VM a cold first connection (both JVMs still interpreting) can take
                    // longer than the default 10 s.
                    "--reactive-rdma.client.connect-timeout=60s",
                    "--gateway.request-timeout=90s")); // longer than the connect timeout, as it must be
            springArgs.addAll(Arrays.asList(args));
            app = new SpringApplicationBuilder(GatewayApplication.class).run(springArgs.toArray(String[]::new));
            String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
            out.println("gateway demo: gateway listening on " + base);

            HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();
            Exchange x = new Exchange(http, base, out);
            x.send("PUT", "/kv/greeting", "hello over RDMA".getBytes(StandardCharsets.UTF_8), 204);
            x.send("GET", "/kv/greeting", null, 200);
            x.send("GET", "/kv/missing", null, 404);
            x.send("POST", "/counters/visits/increment", new byte[0], 200);
            x.send("POST", "/counters/visits/increment?delta=10", new byte[0], 200);
            byte[] big = new byte[3 << 20];
            new Random(42).nextBytes(big);
            x.send("PUT", "/kv/big", big, 204);
            byte[] streamed = x.send("GET", "/kv/big/stream", null, 200);
            boolean same = Arrays.equals(big, streamed);
            out.println("  streamed " + streamed.length + " bytes: " + (same ? "equal to" : "DIFFERENT FROM")
                    + " the value PUT");
            x.send("DELETE", "/kv/greeting", null, 204);
            x.send("GET", "/kv/greeting", null, 404);
            x.send("GET", "/actuator/health", null, 200);
            x.send("GET", "/actuator/metrics/rdma.operations?tag=op:read", null, 200);

            out.println("gateway demo: key-value server: " + kv.metrics().connectionsOpen() + " connection(s) open;"
                    + " closing the gateway");
            app.close();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (kv.metrics().connectionsOpen() > 0 && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
            long left = kv.metrics().connectionsOpen();
            out.println("gateway demo: key-value server: " + left + " connection(s) open after the gateway closed");
            if (x.failures > 0 || !same || left > 0) {
                out.println("gateway demo: FAILED: " + x.failures + " unexpected status(es)"
                        + (same ? "" : ", the streamed value differs") + (left > 0 ? ", " + left
                        + " connection(s) left open" : ""));
                return 1;
            }
            return 0;
        } finally {
            if (app != null) {
                app.close();
            }
            kv.disposeNow(WAIT);
        }
    }

    /** Sends requests and prints them with their responses (bodies shortened); counts unexpected statuses. */
    static final class Exchange {
        private final HttpClient http;
        private final String base;
        private final PrintStream out;
        int failures;

        Exchange(HttpClient http, String base, PrintStream out) {
            this.http = http;
            this.base = base;
            this.out = out;
        }

        /** Sends; a status other than {@code expected} (a 4xx as much as a 5xx) counts as a failure. */
        byte[] send(String method, String path, byte[] body, int expected) throws IOException, InterruptedException {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(WAIT);
            b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            String sent = body == null || body.length == 0 ? "" : " (" + body.length + " bytes)";
            boolean ok = r.statusCode() == expected;
            out.println("  " + method + " " + path + sent + " -> " + r.statusCode() + " " + shown(r)
                    + (ok ? "" : "   UNEXPECTED: wanted " + expected));
            if (!ok) {
                failures++;
            }
            return r.body();
        }

        private static String shown(HttpResponse<byte[]> r) {
            byte[] b = r.body();
            String type = r.headers().firstValue("content-type").orElse("");
            if (b.length == 0) {
                return "";
            }
            if (type.contains("octet-stream") && b.length > 64) {
                return "[" + b.length + " bytes]";
            }
            String s = new String(b, StandardCharsets.UTF_8);
            return s.length() > 300 ? s.substring(0, 300) + "..." : s;
        }
    }
}
