package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;

/**
 * The single-writer rule, checked: a connection's (and a datagram endpoint's) state belongs to the thread of
 * its completion poller
 * (Netty's {@code inEventLoop()}), and every method that reads or writes that state starts with
 * {@code assert OwnerThread.check(poller);}. With assertions enabled (the tests: Surefire runs with
 * {@code -ea}) a call from any other thread fails at once with an {@link AssertionError} naming both
 * threads; without them the check costs nothing.
 */
public final class OwnerThread {
    private OwnerThread() {
    }

    /** True when the calling thread owns {@code poller}'s state; otherwise throws. */
    public static boolean check(CompletionPoller poller) {
        if (!poller.ownsCurrentThread()) {
            throw new AssertionError("thread " + Thread.currentThread().getName() + " touched state "
                    + "owned by completion poller " + poller.name() + ": hand the work over with execute()");
        }
        return true;
    }
}
