package io.reactiverdma.samples.rsocket.client;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code greeting.*}: where the greeting service is, and over which transport. */
@ConfigurationProperties(prefix = "greeting")
public class GreetingClientProperties {
    /** RDMA (rdma_cm, the RSocket transport over RDMA) or TCP (rsocket-transport-netty). */
    public enum Transport { RDMA, TCP }

    /** The transport to call the service over. */
    private Transport transport = Transport.RDMA;

    /** The service's address (for RDMA: an address of an RDMA device's netdev). */
    private String host = "127.0.0.1";

    /** The service's port. */
    private int port = 7000;

    public Transport getTransport() {
        return transport;
    }

    public void setTransport(Transport transport) {
        this.transport = transport;
    }

    public String getHost() {
        return host;
    }

    public void setHost(String host) {
        this.host = host;
    }

    public int getPort() {
        return port;
    }

    public void setPort(int port) {
        this.port = port;
    }
}
