package io.reactiverdma.reactive.impl.completion;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The event-driven idle strategy's steps, on a scripted channel that records what the poller would do to
 * the CQ: a bounded spin after work, then arm, poll, await; no spin after a sleep that found nothing.
 */
class EventDrivenIdleHostTest {

    /** Records arm/poll/await; each poll after an arm returns the next scripted count (default 0). */
    private static final class ScriptedChannel implements EventSleep.Channel {
        final List<String> calls = new ArrayList<>();
        final ArrayDeque<Integer> pollResults = new ArrayDeque<>();

        @Override
        public void arm() {
            calls.add("arm");
        }

        @Override
        public int poll() {
            calls.add("poll");
            Integer n = pollResults.poll();
            return n == null ? 0 : n;
        }

        @Override
        public boolean hasWork() {
            return false;
        }

        @Override
        public void await(long timeoutNs) {
            calls.add("await");
        }

        @Override
        public void wakeup() {
            calls.add("wakeup");
        }
    }

    private final ScriptedChannel channel = new ScriptedChannel();

    private EventDrivenIdle strategy(long spinPolls) {
        return new EventDrivenIdle(spinPolls, new EventSleep(channel, CompletionPoller.MAX_SLEEP_NS));
    }

    @Test
    void afterWorkItSpinsTheConfiguredEmptyCyclesBeforeItArmsAndSleeps() {
        EventDrivenIdle s = strategy(3);
        s.idle(1);
        s.idle(0);
        s.idle(0);
        s.idle(0);
        assertEquals(List.of(), channel.calls, "three empty cycles spin: no arm, no await");
        assertEquals(3, s.spins());
        s.idle(0);
        assertEquals(List.of("arm", "poll", "await"), channel.calls, "the fourth arms, polls once more, sleeps");
    }

    @Test
    void zeroSpinPollsSleepsAtTheFirstEmptyCycle() {
        EventDrivenIdle s = strategy(0);
        s.idle(5);
        s.idle(0);
        assertEquals(List.of("arm", "poll", "await"), channel.calls);
    }

    @Test
    void aSleepThatFoundNothingIsNotFollowedByAnotherSpin() {
        EventDrivenIdle s = strategy(2);
        s.idle(0);
        s.idle(0);
        s.idle(0);
        s.idle(0);
        assertEquals(List.of("arm", "poll", "await", "arm", "poll", "await"), channel.calls,
                "after the spin, every empty cycle sleeps again at once (a timeout or a wake-up with no work)");
    }

    @Test
    void workDuringTheSpinStartsItAgain() {
        EventDrivenIdle s = strategy(2);
        s.idle(0);
        s.idle(0);
        s.idle(3);
        s.idle(0);
        s.idle(0);
        assertEquals(List.of(), channel.calls, "work reset the spin: two more empty cycles spin");
        s.reset();
        assertEquals(0, s.spins(), "reset() is the same as work");
    }

    @Test
    void completionsFoundByThePollAfterArmingEarnANewSpin() {
        EventDrivenIdle s = strategy(1);
        channel.pollResults.add(2);
        s.idle(0);
        s.idle(0);
        assertEquals(List.of("arm", "poll"), channel.calls, "the poll after arming found 2: no await");
        s.idle(0);
        assertEquals(List.of("arm", "poll"), channel.calls, "that was work: one empty cycle spins again");
        s.idle(0);
        assertEquals(List.of("arm", "poll", "arm", "poll", "await"), channel.calls);
    }
}
