package io.reactiverdma.test;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The real engine on an in-JVM loopback RDMA device, for a user's tests: while a {@code LoopbackRdma} is
 * started, {@link io.reactiverdma.reactive.RdmaClient}, {@link io.reactiverdma.reactive.RdmaServer},
 * {@link io.reactiverdma.reactive.RdmaDatagram} and {@link io.reactiverdma.reactive.RdmaResources} in this JVM
 * run on it (the same engine code as on hardware; the device enforces verbs semantics: keys, bounds, access,
 * queue depths, RNR and retries). Its one device answers at {@link #host()}.
 *
 * <p>In a JUnit 5 test, one line starts a fresh device before each test and closes it (and everything opened
 * on it) after:
 * <pre>{@code
 * @RegisterExtension
 * static final LoopbackRdma rdma = LoopbackRdma.create();
 * }</pre>
 * Elsewhere, {@link #start()} and {@link #close()} do the same by hand. One {@code LoopbackRdma} is started
 * at a time in a JVM ({@link #start()} of a second one fails with {@link IllegalStateException}); while none
 * is, the API uses the engine on the machine's RDMA devices as usual.
 *
 * <p>{@link #faults()} injects faults: datagrams lost, connects delayed, posts refused, a host that dies.
 */
public abstract class LoopbackRdma implements BeforeEachCallback, AfterEachCallback, AutoCloseable {
    LoopbackRdma() {
    }

    /** A loopback device, not started yet: {@link #start()} (or the JUnit extension) starts it. */
    public static LoopbackRdma create() {
        return new DefaultLoopbackRdma();
    }

    /**
     * Starts a fresh loopback device and engine and makes the API use them until {@link #close()}.
     *
     * @return this
     * @throws IllegalStateException when this or another {@code LoopbackRdma} is started already
     */
    public abstract LoopbackRdma start();

    /** The address of the loopback device ({@code 127.0.0.1}): servers bind and clients connect to it. */
    public abstract String host();

    /**
     * The faults to inject into the started device.
     *
     * @throws IllegalStateException when not started
     */
    public abstract FaultInjection faults();

    /**
     * Shuts the engine down (every connection, server and endpoint opened on the device is closed, every
     * buffer released), closes the device and makes the API use the machine's engine again. Does nothing when
     * not started.
     */
    @Override
    public abstract void close();

    /** JUnit 5: {@link #start()} before each test. */
    @Override
    public void beforeEach(ExtensionContext context) {
        start();
    }

    /** JUnit 5: {@link #close()} after each test. */
    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }
}
