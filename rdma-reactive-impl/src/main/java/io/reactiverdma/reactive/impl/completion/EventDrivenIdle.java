package io.reactiverdma.reactive.impl.completion;

/**
 * Event-driven idling with a bounded spin: after a cycle that did work (a post, a completion, a task) the
 * poller polls up to {@code spinPolls} more empty cycles before it sleeps on the completion channel
 * ({@link EventSleep}). The completion of a chain the poller has just posted then usually arrives while it
 * still polls, and costs neither the arm ({@code ibv_req_notify_cq}, a system call on most providers) nor a
 * completion event and a thread wake-up; handing work over during the spin costs no eventfd write either
 * (the poller is not {@link EventSleep#sleeping}). A sleep that found nothing is not followed by another
 * spin: only work earns one.
 */
final class EventDrivenIdle implements IdleStrategy {
    private final long spinPolls;
    private final EventSleep sleep;
    private long spins;

    EventDrivenIdle(long spinPolls, EventSleep sleep) {
        this.spinPolls = spinPolls;
        this.sleep = sleep;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            spins = 0;
            return;
        }
        if (spins < spinPolls) {
            spins++;
            Thread.onSpinWait();
            return;
        }
        if (sleep.sleep() > 0) {
            spins = 0; // the poll after arming found completions: work, so the next idle cycles spin again
        }
    }

    @Override
    public void reset() {
        spins = 0;
    }

    /** Empty cycles spun since the last work (for tests). */
    long spins() {
        return spins;
    }
}
