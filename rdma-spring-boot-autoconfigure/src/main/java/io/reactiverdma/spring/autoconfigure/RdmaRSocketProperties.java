package io.reactiverdma.spring.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code reactive-rdma.rsocket.*}: an RSocket server over RDMA serving the application's {@code @MessageMapping}
 * controllers ({@link RdmaRSocketServerAutoConfiguration}), started when {@code reactive-rdma.rsocket.server.port}
 * is set.
 */
@ConfigurationProperties(prefix = RdmaRSocketProperties.PREFIX)
public class RdmaRSocketProperties {
    /** The prefix of these properties. */
    public static final String PREFIX = RdmaProperties.PREFIX + ".rsocket";

    private final Server server = new Server();

    public Server getServer() {
        return server;
    }

    /**
     * {@code reactive-rdma.rsocket.server.*}: the RDMA server under the RSocket server, with every option of
     * {@code reactive-rdma.server.*} but {@code enabled} (setting the port starts it) and {@code drain-timeout}
     * (RSocket's server closes its connections at once). Its receive-buffer-size is the largest RSocket frame:
     * larger payloads are fragmented by RSocket, and clients use the same size (their RECEIVE_BUFFER_SIZE).
     */
    public static class Server extends RdmaProperties.Listener {
    }
}
