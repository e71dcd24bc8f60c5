package io.reactiverdma.samples.rsocket;

import io.reactiverdma.samples.common.DeviceAddress;
import io.reactiverdma.samples.rsocket.client.GreetingClient;
import io.reactiverdma.samples.rsocket.client.GreetingClientApplication;
import io.reactiverdma.samples.rsocket.service.GreetingController;
import io.reactiverdma.samples.rsocket.service.GreetingServiceApplication;
import io.reactiverdma.spring.autoconfigure.RdmaRSocketServerLifecycle;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Flux;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code scripts/demo rsocket}: both applications of the RSocket sample in one JVM. Starts the greeting service
 * ({@code @MessageMapping} endpoints) on this machine's RDMA device, starts the client application pointed at it,
 * calls request-response, a request-stream of 5,000 items read 256 at a time, and a channel, checks every answer,
 * prints them with their times, then closes both. {@code --transport=tcp} runs the same two applications over TCP
 * instead: the service gets {@code spring.rsocket.server.port} in place of {@code reactive-rdma.rsocket.server.port},
 * the client {@code greeting.transport=tcp}; no code differs.
 */
public final class RSocketDemo {
    /** Items of the request-stream and how many the client asks for at a time. */
    static final int STREAM_ITEMS = 5_000;
    static final int STREAM_BATCH = 256;
    // Generous: in the Soft-RoCE VM on a loaded host a cold JVM took 6 min to start the service, and its first
    // request did not finish within 90 s.
    private static final Duration WAIT = Duration.ofSeconds(300);

    private RSocketDemo() {
    }

    public static void main(String[] args) {
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.println("usage: scripts/demo rsocket [--transport=tcp]\n  the greeting service and its client "
                    + "application on this machine's RDMA device's address, over RDMA (default) or TCP");
            return;
        }
        boolean tcp = List.of(args).contains("--transport=tcp");
        String host = DeviceAddress.find().host();
        System.exit(run(host, tcp, System.out));
    }

    /** Runs the demo against {@code host} (an RDMA device's address); 0 when every answer was right, else 1. */
    static int run(String host, boolean tcp, PrintStream out) {
        String transport = tcp ? "TCP" : "RDMA";
        List<String> serviceArgs = new ArrayList<>(List.of("--spring.main.banner-mode=off"));
        if (tcp) {
            serviceArgs.addAll(List.of("--spring.rsocket.server.address=" + host, "--spring.rsocket.server.port=0"));
        } else {
            serviceArgs.addAll(List.of("--reactive-rdma.rsocket.server.host=" + host,
                    "--reactive-rdma.rsocket.server.port=0"));
        }
        try (ConfigurableApplicationContext service = new SpringApplicationBuilder(GreetingServiceApplication.class)
                .web(WebApplicationType.NONE).run(serviceArgs.toArray(String[]::new))) {
            int port = tcp ? Integer.parseInt(service.getEnvironment().getProperty("local.rsocket.server.port"))
                    : service.getBean(RdmaRSocketServerLifecycle.class).server().address().getPort();
            out.println("rsocket demo: greeting service listening on " + host + ":" + port + " (" + transport + ")");
            try (ConfigurableApplicationContext client = new SpringApplicationBuilder(GreetingClientApplication.class)
                    .web(WebApplicationType.NONE)
                    .run("--spring.main.banner-mode=off", "--greeting.transport=" + transport.toLowerCase(Locale.ROOT),
                            "--greeting.host=" + host, "--greeting.port=" + port,
                            // In the Soft-RoCE VM a cold first connection can take longer than the default 10 s.
                            "--reactive-rdma.client.connect-timeout=60s")) {
                GreetingClient greetings = client.getBean(GreetingClient.class);
                int failures = 0;

                long t0 = System.nanoTime();
                String hello = greetings.greet("RSocket over " + transport).block(WAIT);
                out.println("  request-response greet -> \"" + hello + "\" in " + ms(t0));
                failures += check(out, ("Hello, RSocket over " + transport + "!").equals(hello), "the greeting");

                t0 = System.nanoTime();
                long[] expected = {1};
                long inOrder = greetings.numbers(STREAM_ITEMS, STREAM_BATCH)
                        .filter(s -> Long.parseLong(s) == expected[0]++).count().block(WAIT);
                long most = service.getBean(GreetingController.class).mostRequestedAtOnce();
                out.println("  request-stream numbers(" + STREAM_ITEMS + ") -> " + inOrder + " items in order in "
                        + ms(t0) + "; the service was asked for at most " + most + " at a time");
                failures += check(out, inOrder == STREAM_ITEMS, "every item of the stream, in order");
                failures += check(out, most <= STREAM_BATCH, "demand bounded by the client's batch");

                t0 = System.nanoTime();
                List<String> upper = greetings.uppercase(Flux.just("remote", "direct", "memory", "access"))
                        .collectList().block(WAIT);
                out.println("  request-channel uppercase -> " + upper + " in " + ms(t0));
                failures += check(out, List.of("REMOTE", "DIRECT", "MEMORY", "ACCESS").equals(upper), "the channel");

                out.println(failures == 0 ? "rsocket demo: OK over " + transport
                        : "rsocket demo: FAILED: " + failures + " check(s)");
                return failures == 0 ? 0 : 1;
            }
        }
    }

    private static int check(PrintStream out, boolean ok, String what) {
        if (!ok) {
            out.println("  WRONG: " + what);
        }
        return ok ? 0 : 1;
    }

    private static String ms(long t0) {
        return String.format(Locale.ROOT, "%.1f ms", (System.nanoTime() - t0) / 1e6);
    }
}
