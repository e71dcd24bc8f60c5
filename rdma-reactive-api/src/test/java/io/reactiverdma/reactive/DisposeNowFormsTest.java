package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Everything the API hands out that closes (a server, a connection, a datagram endpoint) has the same two
 * blocking forms, {@code disposeNow()} (at most 30 s) and {@code disposeNow(Duration)}: each disposes and waits
 * for {@code onDispose()}, and a wait that times out is an {@link IllegalStateException}.
 */
class DisposeNowFormsTest {
    private static final Class<?>[] CLOSABLES = {DisposableRdmaServer.class, RdmaConnection.class,
            RdmaDatagramEndpoint.class};

    @Test
    void everyClosableHasBothDisposeNowForms() throws NoSuchMethodException {
        for (Class<?> type : CLOSABLES) {
            Method noArg = type.getMethod("disposeNow");
            Method timed = type.getMethod("disposeNow", Duration.class);
            assertTrue(noArg.isDefault() && timed.isDefault(), type.getSimpleName() + ": both forms are defaults");
        }
    }

    @Test
    void aConnectionsDisposeNowDisposesAndWaitsForOnDispose() {
        Sinks.Empty<Void> closed = Sinks.empty();
        AtomicBoolean disposed = new AtomicBoolean();
        RdmaConnection conn = stub(RdmaConnection.class, () -> {
            disposed.set(true);
            closed.tryEmitEmpty();
        }, closed.asMono());
        conn.disposeNow();
        assertTrue(disposed.get());
    }

    @Test
    void aDatagramEndpointsDisposeNowTimesOutWithIllegalStateException() {
        AtomicBoolean disposed = new AtomicBoolean();
        RdmaDatagramEndpoint endpoint = stub(RdmaDatagramEndpoint.class, () -> disposed.set(true), Mono.never());
        assertThrows(IllegalStateException.class, () -> endpoint.disposeNow(Duration.ofMillis(50)));
        assertTrue(disposed.get());
        RdmaConnection conn = stub(RdmaConnection.class, () -> { }, Mono.never());
        assertThrows(IllegalStateException.class, () -> conn.disposeNow(Duration.ofMillis(50)));
    }

    /** An implementation of {@code type} with only dispose() and onDispose(); its default methods run as written. */
    private static <T> T stub(Class<T> type, Runnable dispose, Mono<Void> onDispose) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            if (m.isDefault()) {
                return java.lang.invoke.MethodHandles.privateLookupIn(type, java.lang.invoke.MethodHandles.lookup())
                        .unreflectSpecial(m, type).bindTo(proxy).invokeWithArguments(args == null ? new Object[0] : args);
            }
            switch (m.getName()) {
                case "dispose":
                    dispose.run();
                    return null;
                case "onDispose":
                    return onDispose;
                default:
                    assertEquals("", m.getName(), "not stubbed");
                    return null;
            }
        }));
    }
}
