package io.reactiverdma.samples.rsocket.service;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The serving side of the RSocket sample: {@link GreetingController}'s {@code @MessageMapping} endpoints. Its code
 * names no transport: {@code reactive-rdma.rsocket.server.host} and {@code .port} serve them over RDMA,
 * {@code spring.rsocket.server.port} over TCP (Spring Boot's own server).
 */
@SpringBootApplication
public class GreetingServiceApplication {
    public static void main(String[] args) {
        SpringApplication.run(GreetingServiceApplication.class, args);
    }
}
