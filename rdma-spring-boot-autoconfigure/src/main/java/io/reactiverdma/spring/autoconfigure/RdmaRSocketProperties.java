package io.reactiverdma.spring.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

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

    /** {@code reactive-rdma.rsocket.server.*}. */
    public static class Server {
        /** The address to listen on: an address of an RDMA device's netdev (required with port). */
        private String host;

        /** The port to listen on (rdma_cm); setting it starts the server; 0: any free port. */
        private Integer port;

        /**
         * The largest RSocket frame, as the size of each receive buffer (bytes); larger payloads are fragmented
         * by RSocket. Clients must use the same size (their RECEIVE_BUFFER_SIZE). 0: the engine's default (4096).
         */
        private int receiveBufferSize = 0;

        /** How long the context start waits for the server to listen. */
        private Duration bindTimeout = Duration.ofSeconds(30);

        /** How long shutdown waits for the server's connections to close after it stopped listening. */
        private Duration shutdownTimeout = Duration.ofSeconds(30);

        public String getHost() {
            return host;
        }

        public void setHost(String host) {
            this.host = host;
        }

        public Integer getPort() {
            return port;
        }

        public void setPort(Integer port) {
            this.port = port;
        }

        public int getReceiveBufferSize() {
            return receiveBufferSize;
        }

        public void setReceiveBufferSize(int receiveBufferSize) {
            this.receiveBufferSize = receiveBufferSize;
        }

        public Duration getBindTimeout() {
            return bindTimeout;
        }

        public void setBindTimeout(Duration bindTimeout) {
            this.bindTimeout = bindTimeout;
        }

        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }
    }
}
