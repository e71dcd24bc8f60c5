package io.reactiverdma.samples.rsocket.client;

import org.springframework.messaging.rsocket.RSocketRequester;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.Objects;

/** The greeting service's three interactions, on an {@link RSocketRequester} over any transport. */
public final class GreetingClient {
    private final RSocketRequester requester;

    GreetingClient(RSocketRequester requester) {
        this.requester = Objects.requireNonNull(requester, "requester");
    }

    /** Request-response: emits the greeting for {@code name}; errors as the requester does. */
    public Mono<String> greet(String name) {
        return requester.route("greet").data(name).retrieveMono(String.class);
    }

    /**
     * Request-stream: emits "1".."count" and completes; asks the service for at most {@code batch} items at a time
     * (RSocket's request(n)), so the service produces no further ahead than that.
     */
    public Flux<String> numbers(int count, int batch) {
        return requester.route("numbers").data(String.valueOf(count)).retrieveFlux(String.class).limitRate(batch);
    }

    /** Request-channel: emits each of {@code words} upper-cased, in order, and completes after the last. */
    public Flux<String> uppercase(Flux<String> words) {
        return requester.route("uppercase").data(words).retrieveFlux(String.class);
    }
}
