package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.testsupport.RxeTestSupport;
import reactor.core.Disposable;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What an rxe test opened, closed after it in a fixed order (clients and their closes awaited, then
 * servers, then anything else), so a failed test does not leave connections that disturb the next one.
 * Thread-safe: connections delivered on engine threads may be added.
 */
final class RxeResources implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(60);

    final List<RdmaConnection> clients = new CopyOnWriteArrayList<>();
    final List<DisposableRdmaServer> servers = new CopyOnWriteArrayList<>();
    final List<Disposable> others = new CopyOnWriteArrayList<>();

    /** Fails the test loudly when no device is present (never skips); returns the device's address. */
    static String requireDevice() {
        RxeTestSupport.requireDevice();
        return RxeTestSupport.deviceAddress();
    }

    @Override
    public void close() {
        for (RdmaConnection c : clients) {
            c.dispose();
            c.onDispose().block(WAIT);
        }
        for (DisposableRdmaServer s : servers) {
            s.disposeNow(WAIT);
        }
        for (Disposable d : others) {
            d.dispose();
        }
    }
}
