package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared transport base: each shared setter is written once (in {@link RdmaTransport}, the configuration's
 * in {@link RdmaTransportConfig}) and every role has it, returning the role's own type; each role-specific
 * setter is only on its role.
 */
class TransportRolesTest {
    private static final Set<String> SHARED = Set.of("host", "port", "option", "metrics", "callbackScheduler", "runOn");
    private static final Set<String> CLIENT_ONLY = Set.of("observer", "privateData", "localAddress", "connectTimeout");
    private static final Set<String> SERVER_ONLY = Set.of("observer", "accept", "maxConnections", "acceptTimeout",
            "sharedReceiveQueue", "handle");

    @Test
    void theSharedSettersAreDeclaredOnceInTheBaseAndNoRoleRedeclaresThem() {
        assertEquals(SHARED, settersDeclaredIn(RdmaTransport.class, RdmaTransport.class));
        for (Class<?> role : new Class<?>[] {RdmaClient.class, RdmaServer.class, RdmaDatagram.class}) {
            Set<String> own = settersDeclaredIn(role, role);
            own.retainAll(SHARED);
            assertTrue(own.isEmpty(), role.getSimpleName() + " redeclares " + own);
        }
    }

    @Test
    void eachRoleDeclaresExactlyItsOwnSetters() {
        assertEquals(new TreeSet<>(CLIENT_ONLY), settersDeclaredIn(RdmaClient.class, RdmaClient.class));
        assertEquals(new TreeSet<>(SERVER_ONLY), settersDeclaredIn(RdmaServer.class, RdmaServer.class));
        assertEquals(Set.of(), settersDeclaredIn(RdmaDatagram.class, RdmaDatagram.class));
    }

    @Test
    void aSharedSetterReturnsTheRoleSoRoleSettersChainAfterIt() {
        RdmaConnectionObserver observer = (side, remote, context) -> null;
        ConnectionAcceptor acceptor = r -> reactor.core.publisher.Mono.just(Admission.accept());
        RdmaClient client = RdmaClient.create().port(9).observer(observer).host("h").privateData(new byte[] {7});
        assertSame(observer, client.configuration().observer());
        assertArrayEquals(new byte[] {7}, client.configuration().privateData());
        RdmaServer server = RdmaServer.create().metrics(true).accept(acceptor).callbackScheduler(Schedulers.parallel())
                .maxConnections(3).acceptTimeout(Duration.ofSeconds(2)).sharedReceiveQueue(64, "g");
        assertSame(acceptor, server.configuration().acceptor());
        assertTrue(server.configuration().metrics());
        assertEquals(3, server.configuration().option(RdmaOption.MAX_CONNECTIONS));
        assertEquals(Duration.ofSeconds(2), server.configuration().option(RdmaOption.ACCEPT_TIMEOUT));
        assertEquals(64, server.configuration().option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH));
        assertEquals("g", server.configuration().option(RdmaOption.SHARED_RECEIVE_QUEUE_GROUP));
        RdmaDatagram datagram = RdmaDatagram.create().host("h").port(0).callbackScheduler(Schedulers.parallel());
        assertEquals(0, datagram.configuration().port());
        assertEquals(Duration.ofSeconds(3),
                RdmaClient.create().connectTimeout(Duration.ofSeconds(3)).configuration().option(RdmaOption.CONNECT_TIMEOUT));
    }

    @Test
    void eachConfigurationCarriesOnlyItsRolesSettings() {
        assertEquals(Set.of(), accessorsOf(RdmaTransportConfig.class, Set.of("observer", "acceptor", "privateData")));
        assertEquals(Set.of("observer", "privateData"),
                accessorsOf(RdmaClientConfig.class, Set.of("observer", "acceptor", "privateData")));
        assertEquals(Set.of("observer", "acceptor"),
                accessorsOf(RdmaServerConfig.class, Set.of("observer", "acceptor", "privateData")));
        assertEquals(Set.of(), accessorsOf(RdmaDatagramConfig.class, Set.of("observer", "acceptor", "privateData")));
    }

    @Test
    void aSharedWithKeepsTheRolesOwnSettingsAndType() {
        ConnectionAcceptor acceptor = r -> reactor.core.publisher.Mono.just(Admission.accept());
        RdmaServerConfig server = RdmaServerConfig.defaults().withAcceptor(acceptor).withHost("h").withPort(0)
                .withOption(RdmaOption.POLL_BATCH_SIZE, 8).withMetrics(true).withCallbackScheduler(null);
        assertSame(acceptor, server.acceptor());
        RdmaClientConfig client = RdmaClientConfig.defaults().withPrivateData(new byte[] {1, 2}).withHost("h");
        assertArrayEquals(new byte[] {1, 2}, client.privateData());
        RdmaTransportConfig asBase = client;
        assertTrue(asBase.withPort(1) instanceof RdmaClientConfig, "the base's with* keeps the role");
        assertTrue(RdmaDatagramConfig.defaults().withHost("h") instanceof RdmaDatagramConfig);
        assertFalse(RdmaTransportConfig.defaults() instanceof RdmaClientConfig);
        assertTrue(client.toString().startsWith("RdmaClientConfig{host=h"), client.toString());
        assertTrue(client.toString().contains("2 bytes of private data"), client.toString());
    }

    @Test
    void oneGenericMethodAppliesTheSharedSettingsToEveryRoleAndKeepsItsType() {
        RdmaServer server = shared(RdmaServer.create()).maxConnections(2);
        RdmaClient client = shared(RdmaClient.create()).privateData(new byte[] {1});
        RdmaDatagram datagram = shared(RdmaDatagram.create());
        for (RdmaTransportConfig c : new RdmaTransportConfig[] {server.configuration(), client.configuration(),
                datagram.configuration()}) {
            assertEquals("10.0.0.1", c.host());
            assertEquals(8, c.option(RdmaOption.POLL_BATCH_SIZE));
            assertTrue(c.metrics());
        }
        assertEquals(2, server.configuration().option(RdmaOption.MAX_CONNECTIONS));
    }

    /** What a caller (Spring's properties, say) writes once for every role. */
    private static <T extends RdmaTransport<T, ?>> T shared(T transport) {
        return transport.host("10.0.0.1").port(7000).option(RdmaOption.POLL_BATCH_SIZE, 8).metrics(true);
    }

    /** Public methods named as setters (returning the transport) that {@code type} itself declares. */
    private static Set<String> settersDeclaredIn(Class<?> type, Class<?> returns) {
        return Arrays.stream(type.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()))
                .filter(m -> !m.isBridge() && !m.isSynthetic())
                .filter(m -> returns.isAssignableFrom(m.getReturnType()) || m.getReturnType() == Object.class
                        || m.getReturnType() == RdmaTransport.class)
                .map(Method::getName)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The public accessors among {@code names} that {@code type} has (its own or inherited). */
    private static Set<String> accessorsOf(Class<?> type, Set<String> names) {
        return Arrays.stream(type.getMethods())
                .filter(m -> m.getParameterCount() == 0)
                .map(Method::getName).filter(names::contains)
                .collect(Collectors.toCollection(TreeSet::new));
    }
}
