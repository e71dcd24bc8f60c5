package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaServer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An {@link RdmaClient} bean from the {@code reactive-rdma.client.*} properties and, with
 * {@code reactive-rdma.server.enabled=true}, an RDMA server bound at start (handing connections to the
 * application's {@link RdmaConnectionHandler} bean) and disposed on shutdown. Each backs off when the
 * application defines its own bean of the type. Invalid property values fail the start, naming the property.
 * The client bean is a configuration: it connects when asked ({@link RdmaClient#connect()}), and each
 * connection belongs to whoever made it.
 */
@AutoConfiguration
@ConditionalOnClass(RdmaClient.class)
@EnableConfigurationProperties(RdmaProperties.class)
public class RdmaAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public RdmaClient rdmaClient(RdmaProperties properties, ObjectProvider<RdmaClientCustomizer> customizers) {
        RdmaClient client = RdmaTransportSettings.configure(RdmaClient.create(), properties.getClient());
        for (RdmaClientCustomizer c : customizers.orderedStream().toList()) {
            client = c.customize(client);
        }
        return client;
    }

    /** The server, only when enabled: binding needs a device and an address, so it is never implicit. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = RdmaProperties.PREFIX + ".server", name = "enabled", havingValue = "true")
    static class ServerConfiguration {
        /** Disposed on shutdown, waiting (at most 30 s) until its connections are closed. */
        @Bean(destroyMethod = "disposeNow")
        @ConditionalOnMissingBean
        public DisposableRdmaServer rdmaServer(RdmaProperties properties, ObjectProvider<RdmaConnectionHandler> handler,
                ObjectProvider<RdmaServerCustomizer> customizers) {
            RdmaProperties.Server p = properties.getServer();
            RdmaConnectionHandler h = handler.getIfUnique();
            if (h == null) {
                throw new InvalidConfigurationPropertyValueException(RdmaProperties.PREFIX + ".server.enabled", true,
                        "the server needs exactly one RdmaConnectionHandler bean (what to do with each connection), "
                                + "found " + handler.stream().count());
            }
            java.time.Duration bindTimeout = p.getBindTimeout();
            if (bindTimeout == null || bindTimeout.isNegative() || bindTimeout.isZero()) {
                throw new InvalidConfigurationPropertyValueException(RdmaProperties.PREFIX + ".server.bind-timeout",
                        bindTimeout, "must be a positive duration (how long start-up waits for the server to listen)");
            }
            RdmaServer server = RdmaTransportSettings.configure(RdmaServer.create(), p).handle(h);
            for (RdmaServerCustomizer c : customizers.orderedStream().toList()) {
                server = c.customize(server);
            }
            return server.bindNow(bindTimeout);
        }
    }
}
