package io.reactiverdma.reactive.impl.completion;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.function.Function;

import static io.reactiverdma.reactive.impl.completion.ModelChecks.INVOCATIONS;
import static io.reactiverdma.reactive.impl.completion.ModelChecks.assertFindsBug;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Model check (Lincheck) of the event-driven poller's sleep and wake-up, {@link EventSleep}: a poller that
 * finds no work sleeps, while a user thread hands a task over and wakes it and the device completes a work
 * request. The poller must see both; a lost wake-up or a lost completion event leaves it asleep for good,
 * which Lincheck reports as a hang (the model's await has no timeout: the real one's 1 s safety net would
 * only hide such a bug as a second of latency).
 *
 * <p>The CQ and its completion channel are modelled as the loopback device's CQ behaves (and
 * {@code ibv_req_notify_cq} does): arming asks for one event for the next completion; a completion while
 * armed raises one and disarms; a completion before the arm raises none; the wake-up is sticky (an
 * eventfd). Two broken variants of the sleep, asserted to fail, keep the check honest.
 */
@Tag("model-check")
class EventSleepModelCheck {

    @BeforeEach
    void onlyWhereTheCheckerExplores() {
        ModelChecks.assumeCheckerExplores();
    }

    @Test
    void aSleepingPollerLosesNeitherAWakeUpNorACompletionEvent() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> scenario(EventSleepModelCheck::correct, true, true));
    }

    @Test
    void aSleepingPollerWokenByAUserThreadAloneSeesTheTask() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> scenario(EventSleepModelCheck::correct, true, false));
    }

    @Test
    void aSleepingPollerWokenByACompletionAloneSeesIt() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> scenario(EventSleepModelCheck::correct, false, true));
    }

    private static EventSleep correct(EventSleep.Channel c) {
        return new EventSleep(c, Long.MAX_VALUE);
    }

    /** Checking for work before publishing 'sleeping': a task handed over in between wakes nobody. */
    @Test
    void theCheckFindsALostWakeUpWhenThePollerChecksForWorkBeforeSayingItSleeps() {
        assertFindsBug(() -> scenario(c -> new EventSleep(c, Long.MAX_VALUE) {
            @Override
            int sleep() {
                channel.arm();
                int n = channel.poll();
                if (n > 0 || channel.hasWork()) {
                    return n;
                }
                sleeping = true;
                try {
                    channel.await(maxSleepNs);
                    return 0;
                } finally {
                    sleeping = false;
                }
            }
        }, true, false));
    }

    /** Without the poll after arming, a completion that arrived just before the arm raises no event. */
    @Test
    void theCheckFindsALostCompletionWhenThePollerDoesNotPollAgainAfterArming() {
        assertFindsBug(() -> scenario(c -> new EventSleep(c, Long.MAX_VALUE) {
            @Override
            int sleep() {
                sleeping = true;
                try {
                    channel.arm();
                    if (channel.hasWork()) {
                        return 0;
                    }
                    channel.await(maxSleepNs);
                    return 0;
                } finally {
                    sleeping = false;
                }
            }
        }, false, true));
    }

    /** The poller, and a user thread handing a task over and waking it, a device completing, or both. */
    private static void scenario(Function<EventSleep.Channel, EventSleep> make, boolean withTask,
            boolean withCompletion) {
        ChannelModel channel = new ChannelModel();
        EventSleep sleep = make.apply(channel);
        Thread poller = new Thread(() -> {
            // The poller's loop: a duty cycle (poll, run tasks); no work: sleep. It ends once it saw both.
            while (channel.completionsSeen < (withCompletion ? 1 : 0) || channel.tasksSeen < (withTask ? 1 : 0)) {
                int work = channel.poll() + channel.takeTasks();
                if (work == 0) {
                    sleep.sleep();
                }
            }
        });
        Thread user = new Thread(() -> {
            channel.handOver();
            sleep.wake();
        });
        Thread device = new Thread(channel::complete);
        if (withTask && withCompletion) {
            ModelChecks.runAll(poller, user, device);
        } else {
            ModelChecks.runAll(poller, withTask ? user : device);
        }
        assertEquals(withCompletion ? 1 : 0, channel.completionsSeen, "completions polled");
        assertEquals(withTask ? 1 : 0, channel.tasksSeen, "tasks run");
    }

    /** A CQ with a completion channel and the poller's task count, as the poller sees them. */
    private static final class ChannelModel implements EventSleep.Channel {
        private int unpolled;
        private boolean armed;
        private int events;
        private boolean wakeup;
        private volatile int handedOver;
        /** Poller thread only. */
        int completionsSeen;
        int tasksSeen;

        /** The device adds a completion: an event if armed. */
        synchronized void complete() {
            unpolled++;
            if (armed) {
                armed = false;
                events++;
            }
            notifyAll();
        }

        /** A user thread hands a task over (then wakes the poller). */
        void handOver() {
            handedOver++;
        }

        int takeTasks() {
            int n = handedOver - tasksSeen;
            tasksSeen += n;
            return n;
        }

        @Override
        public synchronized void arm() {
            armed = true;
        }

        @Override
        public synchronized int poll() {
            int n = unpolled;
            unpolled = 0;
            completionsSeen += n;
            return n;
        }

        @Override
        public boolean hasWork() {
            return handedOver != tasksSeen;
        }

        @Override
        public synchronized void await(long timeoutNs) {
            while (events == 0 && !wakeup) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (events > 0) {
                events--;
            } else {
                wakeup = false;
            }
        }

        @Override
        public synchronized void wakeup() {
            wakeup = true;
            notifyAll();
        }
    }
}
