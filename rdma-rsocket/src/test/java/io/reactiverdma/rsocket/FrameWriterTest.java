package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rsocket.internal.UnboundedProcessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How the frames RSocket queues reach the connection's streaming send. */
class FrameWriterTest {
    private static final int FRAMES = 200_000;
    private static final int WINDOW = 4;

    /**
     * The streaming send asks for a window of frames and one more per frame sent, from its poller thread,
     * while RSocket's threads queue frames (stream 0 frames ahead of the others): every frame queued arrives,
     * none is left waiting while the send has asked for it. Seen through the suite on the loopback device
     * (about 1 close in 20 timed out): with 1 MiB receive buffers (a window of 4) the send had asked for 68
     * frames and got 64, with 4,000 keepalives queued, so RSocket's ERROR frame of dispose() never went out.
     */
    @Test
    @Timeout(120)
    void everyQueuedFrameReachesASendThatAsksForFewAtATime() throws Exception {
        UnboundedProcessor sender = new UnboundedProcessor();
        BlockingQueue<Integer> arrived = new LinkedBlockingQueue<>();
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        new FrameWriter(sender, 64, n -> failure.set(new AssertionError("too large: " + n)))
                .subscribe(new CoreSubscriber<ByteBuffer>() {
                    @Override
                    public void onSubscribe(Subscription s) {
                        subscription.set(s);
                    }

                    @Override
                    public void onNext(ByteBuffer frame) {
                        arrived.add(frame.getInt(frame.position()));
                    }

                    @Override
                    public void onError(Throwable t) {
                        failure.set(t);
                    }

                    @Override
                    public void onComplete() {
                    }
                });
        // The send's poller: a window first, then one more for each frame it has sent.
        Thread poller = new Thread(() -> {
            subscription.get().request(WINDOW);
            for (int i = 0; i < FRAMES; i++) {
                try {
                    if (arrived.poll(30, TimeUnit.SECONDS) == null) {
                        return;
                    }
                } catch (InterruptedException e) {
                    return;
                }
                subscription.get().request(1);
            }
        }, "poller");
        AtomicInteger taken = new AtomicInteger();
        CountDownLatch producersDone = new CountDownLatch(2);
        Runnable producer = () -> {
            for (int i = 0; i < FRAMES / 2; i++) {
                ByteBuf frame = Unpooled.directBuffer(8).writeInt(i).writeInt(0);
                if (i % 3 == 0) {
                    sender.tryEmitNormal(frame);
                } else {
                    sender.tryEmitPrioritized(frame);
                }
                taken.incrementAndGet();
            }
            producersDone.countDown();
        };
        poller.start();
        new Thread(producer, "producer-1").start();
        new Thread(producer, "producer-2").start();
        assertTrue(producersDone.await(60, TimeUnit.SECONDS), "producers did not finish");
        poller.join(TimeUnit.SECONDS.toMillis(60));
        assertEquals(null, failure.get());
        assertEquals(0, sender.size(), "frames left queued while the send had asked for them; arrived "
                + (FRAMES - sender.size()) + " of " + FRAMES);
    }

    /**
     * RSocket's dispose() queues the connection's ERROR frame as the final frame (sendErrorAndClose) while
     * keepalives are still being queued and the send asks one frame at a time: the final frame arrives and
     * the frames end, every time.
     */
    @Test
    @Timeout(300)
    void theFinalFrameOfSendErrorAndCloseArrivesWhileFramesAreQueuedAndAskedFor() throws Exception {
        for (int round = 0; round < 3000; round++) {
            UnboundedProcessor sender = new UnboundedProcessor();
            BlockingQueue<Integer> arrived = new LinkedBlockingQueue<>();
            AtomicReference<Subscription> subscription = new AtomicReference<>();
            CountDownLatch completed = new CountDownLatch(1);
            new FrameWriter(sender, 64, n -> { }).subscribe(new CoreSubscriber<ByteBuffer>() {
                @Override
                public void onSubscribe(Subscription s) {
                    subscription.set(s);
                }

                @Override
                public void onNext(ByteBuffer frame) {
                    arrived.add(frame.getInt(frame.position()));
                }

                @Override
                public void onError(Throwable t) {
                    completed.countDown();
                }

                @Override
                public void onComplete() {
                    completed.countDown();
                }
            });
            AtomicInteger finalSeen = new AtomicInteger();
            Thread poller = new Thread(() -> {
                subscription.get().request(WINDOW);
                while (completed.getCount() > 0) {
                    try {
                        Integer v = arrived.poll(10, TimeUnit.MILLISECONDS);
                        if (v == null) {
                            continue;
                        }
                        if (v == -1) {
                            finalSeen.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                    subscription.get().request(1);
                }
            }, "poller");
            poller.start();
            Thread keepalives = new Thread(() -> {
                for (int i = 0; i < 50; i++) {
                    sender.tryEmitPrioritized(Unpooled.directBuffer(8).writeInt(i).writeInt(0));
                }
            }, "keepalives");
            keepalives.start();
            Thread.onSpinWait();
            sender.tryEmitFinal(Unpooled.directBuffer(8).writeInt(-1).writeInt(0));
            keepalives.join();
            assertTrue(completed.await(10, TimeUnit.SECONDS), "round " + round + ": the frames never ended; "
                    + sender.size() + " queued");
            poller.join();
            // the poller stops at the end, maybe before taking what arrived last
            assertEquals(1, finalSeen.get() + (arrived.contains(-1) ? 1 : 0), "round " + round + ": the final frame");
        }
    }
}
