package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.ConnectionAcceptor;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaServer;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import java.time.Duration;

/**
 * An {@link RdmaClient} bean from the {@code reactive-rdma.client.*} properties, an {@link RdmaDatagram} bean
 * from {@code reactive-rdma.datagram.*} and, with
 * {@code reactive-rdma.server.enabled=true}, an RDMA server ({@link RdmaServerLifecycle}) bound when the context
 * starts, after the web server, admitting requests through the application's {@link ConnectionAcceptor} bean
 * when it has one (several fail the start unless one is {@code @Primary}: never "no admission"), handing connections to its {@link RdmaConnectionHandler} bean, and
 * disposed when it stops. Each backs off when the application defines its own bean of the type. Invalid
 * property values fail the start, naming the property; properties that have no effect are logged
 * ({@link RdmaIneffectiveProperties}). The client bean is a configuration: it connects when asked
 * ({@link RdmaClient#connect()}), and each connection belongs to whoever made it.
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

    /**
     * Unreliable datagrams from the {@code reactive-rdma.datagram.*} properties: a configuration, bound when the
     * application asks ({@link RdmaDatagram#bind()}); meters as the client's when there is a registry.
     */
    @Bean
    @ConditionalOnMissingBean
    public RdmaDatagram rdmaDatagram(RdmaProperties properties, ObjectProvider<RdmaMetricsBinding> metrics) {
        RdmaDatagram datagram = RdmaTransportSettings.configure(RdmaDatagram.create(), properties.getDatagram());
        RdmaMetricsBinding binding = metrics.getIfUnique();
        return binding != null ? binding.customize(datagram) : datagram;
    }

    /**
     * Warns of properties that have no effect, once the singletons exist: not inside a bean method that an
     * application's own bean or lazy initialisation would skip (Boot never makes this type lazy).
     */
    @Bean
    static SmartInitializingSingleton rdmaIneffectivePropertiesWarning(ObjectProvider<RdmaProperties> properties,
            ObjectProvider<RdmaRSocketProperties> rsocket, Environment environment) {
        // The RSocket server's properties are a bean only when its auto-configuration applied (the port set, its
        // classes present): that bean is the sign it started, and without it they are read here to be named.
        return () -> properties.ifAvailable(p -> RdmaIneffectiveProperties.warn(p, Binder.get(environment),
                rsocket.getIfAvailable() != null));
    }

    /** Opt-in: the engine is process-wide, so releasing it when one context closes is the application's call. */
    @Bean
    @ConditionalOnProperty(prefix = RdmaProperties.PREFIX, name = "release-engine-on-close", havingValue = "true")
    static RdmaEngineRelease rdmaEngineRelease() {
        return new RdmaEngineRelease();
    }

    /** The server, only when enabled: binding needs a device and an address, so it is never implicit. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = RdmaProperties.PREFIX + ".server", name = "enabled", havingValue = "true")
    static class ServerConfiguration {
        /** Configured now (bad values fail here, naming the property); bound in its lifecycle phase. */
        @Bean
        @ConditionalOnMissingBean({RdmaServerLifecycle.class, DisposableRdmaServer.class})
        public RdmaServerLifecycle rdmaServer(RdmaProperties properties, ObjectProvider<RdmaConnectionHandler> handler,
                ObjectProvider<RdmaServerCustomizer> customizers, ObjectProvider<ConnectionAcceptor> acceptor,
                ListableBeanFactory beans) {
            RdmaProperties.Server p = properties.getServer();
            RdmaConnectionHandler h = handler.getIfUnique();
            if (h == null) {
                throw new InvalidConfigurationPropertyValueException(RdmaProperties.PREFIX + ".server.enabled", true,
                        "the server needs exactly one RdmaConnectionHandler bean (what to do with each connection), "
                                + "found " + handler.stream().count());
            }
            String prefix = RdmaProperties.PREFIX + ".server";
            Duration bindTimeout = RdmaTransportSettings.positive(prefix, "bind-timeout", p.getBindTimeout(),
                    "how long start-up waits for the server to listen");
            Duration shutdownTimeout = RdmaTransportSettings.positive(prefix, "shutdown-timeout",
                    p.getShutdownTimeout(), "how long shutdown waits for the server's connections to close");
            Duration drainTimeout = p.getDrainTimeout();
            if (drainTimeout == null || drainTimeout.isNegative()) {
                throw new InvalidConfigurationPropertyValueException(RdmaProperties.PREFIX + ".server.drain-timeout",
                        drainTimeout, "must be 0 or a positive duration (how long open connections may go on "
                                + "working at shutdown)");
            }
            RdmaServer server = RdmaTransportSettings.configure(RdmaServer.create(), p, prefix).handle(h);
            server = ConnectionAcceptorBean.apply(server, acceptor, beans, RdmaProperties.PREFIX + ".server.enabled",
                    true);
            for (RdmaServerCustomizer c : customizers.orderedStream().toList()) {
                server = c.customize(server);
            }
            RdmaIneffectiveProperties.warnForServer(prefix, p, server);
            return new RdmaServerLifecycle(server, bindTimeout, drainTimeout, shutdownTimeout);
        }
    }
}
