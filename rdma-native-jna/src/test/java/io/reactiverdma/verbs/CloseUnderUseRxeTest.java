package io.reactiverdma.verbs;

import io.reactiverdma.natives.ClosedResourceException;
import io.reactiverdma.natives.NativeResource;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Closing native objects while other threads use them, on the real provider (review findings 1, 5, 6 of
 * the native layer): rxe unmaps a QP's rings in ibv_destroy_qp, so a post that raced the destroy used to be a
 * write into freed memory; now every call either runs before the release or fails with
 * {@link ClosedResourceException}.
 */
@Tag("rxe")
class CloseUnderUseRxeTest {
    private VerbsContext ctx;

    @BeforeEach
    void open() {
        RxeTestSupport.requireDevice();
        ctx = Rxe.open();
    }

    @AfterEach
    void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    /** Finding 1: a thread posting RDMA WRITEs while another closes the PD ends in ClosedResourceException only. */
    @Test
    void postsRacingAProtectionDomainCloseEndInClosedResourceExceptionOnly() throws Exception {
        for (int round = 0; round < 20; round++) {
            ProtectionDomain pd = ctx.allocPd();
            ByteBuffer buf = Rxe.direct(8192);
            MemoryRegion mr = pd.registerMemory(buf, AccessFlags.ALL_REMOTE);
            CompletionQueue cqA = ctx.createCompletionQueue(256, null, 0);
            CompletionQueue cqB = ctx.createCompletionQueue(256, null, 0);
            QueuePair a = pd.createQueuePair(QpInitAttributes.rc(cqA).maxSendWr(128).maxRecvWr(4));
            QueuePair b = pd.createQueuePair(QpInitAttributes.rc(cqB).maxSendWr(4).maxRecvWr(4));
            Rxe.connect(ctx, a, b);
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            CountDownLatch posting = new CountDownLatch(1);
            Thread poster = new Thread(() -> {
                SendWorkRequests w = new SendWorkRequests(1, 1);
                int i = w.add(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
                w.sge(i, mr, 0, 64).rdma(i, mr.address() + 4096, mr.rkey());
                WorkCompletions wcs = new WorkCompletions(16);
                try {
                    while (true) {
                        try {
                            a.postSend(w);
                        } catch (io.reactiverdma.natives.NativeCallException full) {
                            // send queue full (ENOMEM): poll and go on
                        }
                        posting.countDown();
                        cqA.poll(wcs);
                    }
                } catch (ClosedResourceException expected) {
                    // the only way out
                } catch (Throwable t) {
                    unexpected.compareAndSet(null, t);
                }
            });
            poster.start();
            assertTrue(posting.await(30, TimeUnit.SECONDS));
            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
            pd.close(); // closes both QPs first, while the poster may be inside post_send
            poster.join(30_000);
            assertFalse(poster.isAlive());
            assertNull(unexpected.get(), () -> "round: " + unexpected.get());
            assertTrue(a.isClosed() && b.isClosed() && mr.isClosed());
            cqA.close();
            cqB.close();
        }
    }

    /**
     * Finding 5: an MR with a bound type 2 window used to fail ibv_dereg_mr with EINVAL and be recorded as
     * closed anyway (pinned memory unreachable, the PD leaking with EBUSY). Now the MR deallocates the
     * windows bound to it first, and closes.
     */
    @Test
    void aRegionWithABoundType2WindowClosesAfterItsWindow() {
        ProtectionDomain pd = ctx.allocPd();
        ByteBuffer bufA = Rxe.direct(8192);
        ByteBuffer bufB = Rxe.direct(8192);
        MemoryRegion mrA = pd.registerMemory(bufA, AccessFlags.ALL_REMOTE | AccessFlags.MW_BIND);
        MemoryRegion mrB = pd.registerMemory(bufB, AccessFlags.ALL_REMOTE | AccessFlags.MW_BIND);
        CompletionQueue cqA = ctx.createCompletionQueue(16, null, 0);
        CompletionQueue cqB = ctx.createCompletionQueue(16, null, 0);
        QueuePair a = pd.createQueuePair(QpInitAttributes.rc(cqA).maxSendWr(16).maxRecvWr(16));
        QueuePair b = pd.createQueuePair(QpInitAttributes.rc(cqB).maxSendWr(16).maxRecvWr(16));
        Rxe.connect(ctx, a, b);
        MemoryWindow mw = pd.allocMemoryWindow(MemoryWindowType.TYPE_2);
        int rkey = Verbs.incRkey(mw.rkey());
        SendWorkRequests bind = new SendWorkRequests(1, 0);
        int i = bind.add(7, WrOpcode.BIND_MW, SendFlags.SIGNALED);
        bind.bindMw(i, mw, rkey, mrB, mrB.address(), 256, AccessFlags.REMOTE_WRITE | AccessFlags.LOCAL_WRITE);
        b.postSend(bind);
        Rxe.awaitSuccess(cqB);

        Rxe.fill(bufA, 0, 256, 70);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        int w = s.add(8, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
        s.sge(w, mrA, 0, 256).rdma(w, mrB.address(), rkey);
        a.postSend(s);
        Rxe.awaitSuccess(cqA);
        assertArrayEquals(Rxe.pattern(256, 70), Rxe.bytes(bufB, 0, 256));

        mrB.close(); // was: NativeCallException(ibv_dereg_mr, EINVAL) and the MR recorded as closed
        assertTrue(mrB.isClosed());
        assertTrue(mw.isClosed(), "the window bound to it was deallocated first");
        assertFalse(pd.children().contains(mrB));
        pd.close(); // was: EBUSY (the PD still held the MR it no longer listed)
        assertTrue(pd.isClosed());
        assertEquals(List.of(), NativeResource.unreleased());
        cqA.close();
        cqB.close();
    }

    /**
     * Finding 6: registrations racing a PD close either succeed (and are closed with the PD) or fail with
     * ClosedResourceException after their ibv_reg_mr was undone; none survives the close. Counted with the
     * device's MR resources ({@code rdma resource show mr} counts the same).
     */
    @Test
    void registrationsRacingAProtectionDomainCloseLeaveNoRegistrationBehind() throws Exception {
        ByteBuffer buf = Rxe.direct(4096);
        for (int round = 0; round < 20; round++) {
            ProtectionDomain pd = ctx.allocPd();
            AtomicInteger registered = new AtomicInteger();
            List<MemoryRegion> made = new ArrayList<>();
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread registrar = new Thread(() -> {
                try {
                    while (true) {
                        started.countDown();
                        MemoryRegion mr = pd.registerMemory(buf, AccessFlags.LOCAL_WRITE);
                        registered.incrementAndGet();
                        synchronized (made) {
                            made.add(mr);
                        }
                    }
                } catch (ClosedResourceException expected) {
                    // the only way out
                } catch (Throwable t) {
                    unexpected.compareAndSet(null, t);
                }
            });
            registrar.start();
            assertTrue(started.await(30, TimeUnit.SECONDS));
            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
            pd.close();
            registrar.join(30_000);
            assertFalse(registrar.isAlive());
            assertNull(unexpected.get());
            synchronized (made) {
                for (MemoryRegion mr : made) {
                    assertTrue(mr.isClosed(), mr + " outlived its PD");
                }
            }
            assertTrue(pd.isClosed(), "the PD closed (ibv_dealloc_pd would fail with EBUSY under a leaked MR)");
        }
    }
}
