package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.ConnectionAcceptor;
import io.reactiverdma.reactive.RdmaServer;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import java.util.Arrays;

/**
 * The application's {@link ConnectionAcceptor} bean as the admission step of every server over RDMA that the
 * auto-configuration binds (the RDMA server and the RSocket server over RDMA), by one rule: exactly one bean (or
 * one marked {@code @Primary} among several) admits; none admits every request; several with none primary fail
 * the start, because taking none of them would admit every peer (fail open).
 */
final class ConnectionAcceptorBean {
    private ConnectionAcceptorBean() {
    }

    /**
     * {@code server} admitting through the application's acceptor, or unchanged when it has none; several and none
     * primary: an {@link InvalidConfigurationPropertyValueException} naming {@code property} (the one that starts
     * the server, with its {@code value}) and the beans.
     */
    static RdmaServer apply(RdmaServer server, ObjectProvider<ConnectionAcceptor> acceptors,
            ListableBeanFactory beans, String property, Object value) {
        ConnectionAcceptor acceptor = acceptors.getIfUnique();
        if (acceptor != null) {
            return server.accept(acceptor);
        }
        if (acceptors.stream().findAny().isPresent()) {
            throw new InvalidConfigurationPropertyValueException(property, value,
                    "the server takes at most one ConnectionAcceptor bean (or one marked @Primary), found "
                            + Arrays.toString(beans.getBeanNamesForType(ConnectionAcceptor.class))
                            + ": compose them into one, or mark the one that decides @Primary");
        }
        return server;
    }
}
