package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.PollerIdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * What a poller does after a duty cycle, shaped like Agrona's {@code IdleStrategy}: {@code idle(workCount)}
 * with work resets the strategy, without work it takes the next (longer) idle step.
 */
interface IdleStrategy {
    void idle(int workCount);

    void reset();

    /**
     * The spinning strategies of {@code config}; the event-driven one ({@link EventDrivenIdle}) needs the
     * poller's sleep, so the poller builds it.
     */
    static IdleStrategy of(PollerIdleStrategy config) {
        return switch (config.kind()) {
            case BUSY_SPIN -> new BusySpin();
            case BACKOFF -> new Backoff(config.maxSpins(), config.maxYields(), config.minParkPeriodNs(),
                    config.maxParkPeriodNs());
            case EVENT_DRIVEN -> throw new IllegalArgumentException("event-driven idling is done by the poller");
        };
    }

    /** {@code Thread.onSpinWait()} and nothing else. */
    final class BusySpin implements IdleStrategy {
        @Override
        public void idle(int workCount) {
            if (workCount <= 0) {
                Thread.onSpinWait();
            }
        }

        @Override
        public void reset() {
        }
    }

    /** Spin, then yield, then park with exponentially growing periods (Agrona's BackoffIdleStrategy). */
    final class Backoff implements IdleStrategy {
        enum State { NOT_IDLE, SPINNING, YIELDING, PARKING }

        private final long maxSpins;
        private final long maxYields;
        private final long minParkPeriodNs;
        private final long maxParkPeriodNs;
        private State state = State.NOT_IDLE;
        private long spins;
        private long yields;
        private long parkPeriodNs;

        Backoff(long maxSpins, long maxYields, long minParkPeriodNs, long maxParkPeriodNs) {
            this.maxSpins = maxSpins;
            this.maxYields = maxYields;
            this.minParkPeriodNs = minParkPeriodNs;
            this.maxParkPeriodNs = maxParkPeriodNs;
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                reset();
                return;
            }
            switch (state) {
                case NOT_IDLE:
                    state = State.SPINNING;
                    spins++;
                    // fall through to the spin below only once
                    Thread.onSpinWait();
                    break;
                case SPINNING:
                    Thread.onSpinWait();
                    if (++spins > maxSpins) {
                        state = State.YIELDING;
                        yields = 0;
                    }
                    break;
                case YIELDING:
                    if (++yields > maxYields) {
                        state = State.PARKING;
                        parkPeriodNs = minParkPeriodNs;
                    } else {
                        Thread.yield();
                    }
                    break;
                case PARKING:
                default:
                    LockSupport.parkNanos(parkPeriodNs);
                    parkPeriodNs = Math.min(parkPeriodNs << 1, maxParkPeriodNs);
                    break;
            }
        }

        @Override
        public void reset() {
            spins = 0;
            yields = 0;
            parkPeriodNs = minParkPeriodNs;
            state = State.NOT_IDLE;
        }

        /** For tests: the current step and park period. */
        State state() {
            return state;
        }

        long parkPeriodNs() {
            return parkPeriodNs;
        }
    }
}
