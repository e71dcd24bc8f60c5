package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.verbs.Registration;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Defect 8 of the engine-core issue: {@code ibv_reg_mr} is a slow system call (it pins every page), and it
 * ran while holding the pool's monitor, which every poller needs to recycle a buffer: one large
 * registration stalled every completion queue. A registration must not block allocation or recycling.
 */
class BufferPoolRegistrationHostTest {
    /** Registers through {@link FakeRegistrar}, but a buffer of at least 1 MiB waits for {@link #proceed}. */
    static final class SlowRegistrar implements BufferPool.Registrar {
        final FakeRegistrar fake = new FakeRegistrar();
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch proceed = new CountDownLatch(1);

        @Override
        public Registration register(ByteBuffer directBuffer, Set<RemoteAccess> remoteAccess) {
            if (directBuffer.capacity() >= 1 << 20) {
                inside.countDown();
                try {
                    proceed.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return fake.register(directBuffer, remoteAccess);
        }
    }

    @Test
    void aSlowRegistrationDoesNotBlockAllocatingOrRecyclingPooledBuffers() throws Exception {
        SlowRegistrar registrar = new SlowRegistrar();
        BufferPool pool = new BufferPool(registrar, 4096, "slow registration test");
        RegisteredBuffer warm = pool.allocate(64); // the slab exists: recycling needs no registration
        // Own threads, not the common pool: on 2 cores it has one thread, which the registration would hold.
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        CompletableFuture<RegisteredBuffer> big = CompletableFuture.supplyAsync(
                () -> pool.register(ByteBuffer.allocateDirect(1 << 20), RemoteAccess.READ), threads);
        assertTrue(registrar.inside.await(10, TimeUnit.SECONDS), "the large registration started");
        try {
            CompletableFuture<Void> poller = CompletableFuture.runAsync(() -> {
                warm.release();                    // what a poller does when an operation completes
                pool.allocate(64).release();       // and when it copies a message
            }, threads);
            poller.get(2, TimeUnit.SECONDS);       // TimeoutException: blocked behind ibv_reg_mr
        } finally {
            registrar.proceed.countDown();
        }
        RegisteredBuffer b = big.get(10, TimeUnit.SECONDS);
        assertEquals(1 << 20, b.length());
        b.release();
        pool.close();
        threads.shutdown();
    }
}
