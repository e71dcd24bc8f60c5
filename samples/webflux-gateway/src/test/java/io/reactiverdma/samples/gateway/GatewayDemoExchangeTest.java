package io.reactiverdma.samples.gateway;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The gateway demo's exit status counts every unexpected status (issue 24, review finding 11f): before, only
 * 5xx counted, so a PUT answered 400 (and the 404 of the GET after it) left the demo at exit 0.
 */
class GatewayDemoExchangeTest {
    @Test
    void a4xxWhereA2xxWasExpectedIsAFailure() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", x -> {
            int status = x.getRequestMethod().equals("PUT") ? 400 : 404;
            x.sendResponseHeaders(status, -1);
            x.close();
        });
        server.start();
        try {
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            GatewayDemo.Exchange x = new GatewayDemo.Exchange(HttpClient.newHttpClient(),
                    "http://127.0.0.1:" + server.getAddress().getPort(), new PrintStream(text, true, StandardCharsets.UTF_8));
            x.send("PUT", "/kv/greeting", new byte[] {1}, 204);
            x.send("GET", "/kv/missing", null, 404);
            assertEquals(1, x.failures, text.toString(StandardCharsets.UTF_8));
            assertTrue(text.toString(StandardCharsets.UTF_8).contains("UNEXPECTED: wanted 204"));
        } finally {
            server.stop(0);
        }
    }
}
