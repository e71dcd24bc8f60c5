package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An option set on a role that does not use it is refused when it is set (the earliest moment: nothing is
 * allocated, nothing is bound), with an {@link InvalidRequestException} of reason
 * {@link InvalidRequestException.Reason#OPTION_NOT_FOR_ROLE} naming the option and the role.
 */
class OptionRolesTest {
    @Test
    void aServerOnlyOptionOnAClientIsRefusedNamingTheOptionAndTheRole() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaClient.create().option(RdmaOption.MAX_CONNECTIONS, 10));
        assertEquals(InvalidRequestException.Reason.OPTION_NOT_FOR_ROLE, e.reason());
        assertTrue(e.getMessage().contains("MAX_CONNECTIONS") && e.getMessage().contains("client"), e.getMessage());
    }

    @Test
    void aClientOnlyOptionOnAServerIsRefusedNamingTheOptionAndTheRole() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaServer.create().option(RdmaOption.LOCAL_ADDRESS, "10.0.0.1"));
        assertEquals(InvalidRequestException.Reason.OPTION_NOT_FOR_ROLE, e.reason());
        assertTrue(e.getMessage().contains("LOCAL_ADDRESS") && e.getMessage().contains("server"), e.getMessage());
        assertThrows(InvalidRequestException.class, () -> RdmaServerConfig.defaults()
                .withOption(RdmaOption.TYPE_OF_SERVICE, 8));
        assertThrows(InvalidRequestException.class, () -> RdmaServer.create()
                .option(RdmaOption.DATAGRAM_PEER_REFRESH, Duration.ofSeconds(1)));
    }

    @Test
    void aConnectionOptionOnADatagramEndpointIsRefusedNamingTheOptionAndTheRole() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaDatagram.create().option(RdmaOption.CREDIT_FLOW_CONTROL, false));
        assertEquals(InvalidRequestException.Reason.OPTION_NOT_FOR_ROLE, e.reason());
        assertTrue(e.getMessage().contains("CREDIT_FLOW_CONTROL") && e.getMessage().contains("datagram"),
                e.getMessage());
        assertThrows(InvalidRequestException.class, () -> RdmaDatagramConfig.defaults()
                .withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 64));
        assertThrows(InvalidRequestException.class, () -> RdmaDatagram.create()
                .option(RdmaOption.IDLE_PROBE_INTERVAL, Duration.ZERO));
    }

    @Test
    void aDatagramOnlyOptionOnAClientIsRefused() {
        assertThrows(InvalidRequestException.class, () -> RdmaClient.create()
                .option(RdmaOption.DATAGRAM_ADDRESS_HANDLES, 16));
    }

    @Test
    void theRoleCheckComesAfterTheValueCheckOnlyForOptionsTheRoleUses() {
        // A role's own option with a bad value is still a range error, not a role error.
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RdmaServer.create().option(RdmaOption.MAX_CONNECTIONS, 0));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
    }

    @Test
    void everyRoleAcceptsEveryOptionItUses() {
        for (RdmaOption<?> option : RdmaOption.ALL) {
            assertFalse(option.roles().isEmpty(), option + " applies to no role");
            if (option.appliesTo(RdmaOption.Role.CLIENT)) {
                setDefault(RdmaClient.create(), option);
            }
            if (option.appliesTo(RdmaOption.Role.SERVER)) {
                setDefault(RdmaServer.create(), option);
            }
            if (option.appliesTo(RdmaOption.Role.DATAGRAM)) {
                setDefault(RdmaDatagram.create(), option);
            }
        }
        assertEquals(EnumSet.of(RdmaOption.Role.CLIENT), RdmaOption.TYPE_OF_SERVICE.roles());
        assertEquals(EnumSet.of(RdmaOption.Role.SERVER), RdmaOption.MAX_CONNECTIONS.roles());
        assertEquals(EnumSet.allOf(RdmaOption.Role.class), RdmaOption.SEND_QUEUE_DEPTH.roles());
    }

    @Test
    void aRolelessConfigurationTakesEveryOptionAndEachRoleKeepsOnlyItsOwn() {
        RdmaTransportConfig shared = RdmaTransportConfig.defaults()
                .withOption(RdmaOption.MAX_CONNECTIONS, 5)
                .withOption(RdmaOption.LOCAL_ADDRESS, "10.0.0.2")
                .withOption(RdmaOption.SEND_QUEUE_DEPTH, 32);
        assertEquals(Set.of(RdmaOption.LOCAL_ADDRESS, RdmaOption.SEND_QUEUE_DEPTH),
                RdmaClientConfig.of(shared).options().keySet());
        assertEquals(Set.of(RdmaOption.MAX_CONNECTIONS, RdmaOption.SEND_QUEUE_DEPTH),
                RdmaServerConfig.of(shared).options().keySet());
        assertEquals(Set.of(RdmaOption.SEND_QUEUE_DEPTH), RdmaDatagramConfig.of(shared).options().keySet());
    }

    private static <T> void setDefault(RdmaTransport<?, ?> transport, RdmaOption<T> option) {
        transport.option(option, option.defaultValue());
    }
}
