package io.reactiverdma.samples.rsocket.service;

import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/** Plain Spring RSocket endpoints: nothing here knows whether they are served over RDMA or TCP. */
@Controller
public class GreetingController {
    /** The most items of one {@code numbers} stream produced ahead of the requester's demand, per stream. */
    private final AtomicLong mostRequestedAtOnce = new AtomicLong();

    /** Request-response: one greeting per name. */
    @MessageMapping("greet")
    public Mono<String> greet(String name) {
        return Mono.just("Hello, " + name + "!");
    }

    /**
     * Request-stream: {@code count} items ("1".."count"), produced only as the requester asks for them (RSocket's
     * request(n) frames); records the largest single request seen, to show the demand the requester sent.
     */
    @MessageMapping("numbers")
    public Flux<String> numbers(String count) {
        int n = Integer.parseInt(count.trim());
        return Flux.range(1, n).map(String::valueOf)
                .doOnRequest(r -> mostRequestedAtOnce.accumulateAndGet(r, Math::max));
    }

    /** Request-channel: each word the requester sends, upper-cased, as it arrives. */
    @MessageMapping("uppercase")
    public Flux<String> uppercase(Flux<String> words) {
        return words.map(w -> w.toUpperCase(Locale.ROOT));
    }

    /** The largest demand one {@code numbers} stream received at once (0 before any). */
    public long mostRequestedAtOnce() {
        return mostRequestedAtOnce.get();
    }
}
