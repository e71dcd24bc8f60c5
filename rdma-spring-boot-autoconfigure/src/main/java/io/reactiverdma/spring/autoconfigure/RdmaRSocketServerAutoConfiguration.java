package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.ConnectionAcceptor;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.rsocket.RdmaServerChannel;
import io.reactiverdma.rsocket.RdmaServerTransport;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.rsocket.server.RSocketServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.messaging.rsocket.annotation.support.RSocketMessageHandler;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * With {@code reactive-rdma.rsocket.server.port} set, an RSocket server over RDMA
 * ({@link RdmaRSocketServerLifecycle}) that serves the application's {@code @MessageMapping} controllers through
 * Spring Boot's own {@link RSocketMessageHandler} (its codecs, routing and strategies as Boot configured them),
 * beside or instead of Boot's TCP/WebSocket server ({@code spring.rsocket.server.*}). RSocket fragments payloads
 * larger than one frame ({@code reactive-rdma.rsocket.server.receive-buffer-size}); payloads are decoded zero-copy
 * when the strategies use Netty buffers, as Boot's own server does. The application's Boot
 * {@link RSocketServerCustomizer} beans customize it (resumption, interceptors...), and its
 * {@link RdmaServerCustomizer} beans the RDMA server under it, so the engine's meters and observations are in the
 * application's registries as for the auto-configured RDMA server. The application's {@link ConnectionAcceptor}
 * bean admits its RDMA connections by the RDMA server's rule (one bean, or the {@code @Primary} one of several,
 * decides; several with none primary fail the start: never "no admission"). Backs off when the application
 * defines its own {@link RdmaRSocketServerLifecycle}.
 */
@AutoConfiguration(after = {RdmaAutoConfiguration.class, RdmaMetricsAutoConfiguration.class},
        afterName = "org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration")
@ConditionalOnClass({RdmaServer.class, RdmaServerTransport.class, RSocketServer.class, RSocketMessageHandler.class,
        RSocketServerCustomizer.class})
@ConditionalOnProperty(prefix = RdmaRSocketProperties.PREFIX + ".server", name = "port")
@EnableConfigurationProperties(RdmaRSocketProperties.class)
public class RdmaRSocketServerAutoConfiguration {
    private static final String SERVER = RdmaRSocketProperties.PREFIX + ".server";

    /** Configured now (bad values fail the start here, naming the property); bound in its lifecycle phase. */
    @Bean
    @ConditionalOnMissingBean
    public RdmaRSocketServerLifecycle rdmaRSocketServer(RdmaRSocketProperties properties,
            ObjectProvider<RSocketMessageHandler> messageHandler, ObjectProvider<RdmaServerCustomizer> rdmaCustomizers,
            ObjectProvider<RSocketServerCustomizer> rsocketCustomizers, ObjectProvider<ConnectionAcceptor> acceptor,
            ListableBeanFactory beans) {
        RdmaRSocketProperties.Server p = properties.getServer();
        RSocketMessageHandler handler = messageHandler.getIfUnique();
        if (handler == null) {
            throw new InvalidConfigurationPropertyValueException(SERVER + ".port", p.getPort(),
                    "the RSocket server needs Spring's RSocketMessageHandler bean (Spring Boot's RSocket "
                            + "auto-configuration provides it: spring-boot-starter-rsocket), found "
                            + messageHandler.stream().count());
        }
        // Checked before anything is configured: a bad value fails the start naming its property.
        Duration bindTimeout = RdmaTransportSettings.positive(SERVER, "bind-timeout", p.getBindTimeout(),
                "how long start-up waits for the server to listen");
        Duration shutdownTimeout = RdmaTransportSettings.positive(SERVER, "shutdown-timeout", p.getShutdownTimeout(),
                "how long shutdown waits for the server's connections to close");
        RdmaServer rdma = RdmaTransportSettings.configure(RdmaServer.create(), p, SERVER);
        rdma = ConnectionAcceptorBean.apply(rdma, acceptor, beans, SERVER + ".port", p.getPort());
        for (RdmaServerCustomizer c : rdmaCustomizers.orderedStream().toList()) {
            rdma = c.customize(rdma);
        }
        RdmaIneffectiveProperties.warnForServer(SERVER, p, rdma);
        RdmaServerTransport transport = RdmaServerTransport.create(rdma);
        RSocketServer server = RSocketServer.create(handler.responder()).fragment(transport.maxFrameLength());
        if (handler.getRSocketStrategies().dataBufferFactory() instanceof NettyDataBufferFactory) {
            server.payloadDecoder(PayloadDecoder.ZERO_COPY); // as Boot's own server: Spring releases what it decoded
        }
        rsocketCustomizers.orderedStream().forEach(c -> c.customize(server));
        Mono<RdmaServerChannel> bind = Mono.defer(() -> server.bind(transport));
        return new RdmaRSocketServerLifecycle(bind, bindTimeout, shutdownTimeout);
    }
}
