package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The structure review's A9.5: {@code callbackScheduler(null)} means "back on the engine's threads" on every
 * role, as the configuration always said, and {@code metrics(false, null)} turns metrics off without
 * demanding a recorder it would forget anyway.
 */
class NullMeansDefaultSettersTest {
    @Test
    void callbackSchedulerNullPutsCallbacksBackOnTheEngineThreadsOfAClient() {
        RdmaClient c = RdmaClient.create().callbackScheduler(Schedulers.parallel()).callbackScheduler(null);
        assertNull(c.configuration().callbackScheduler());
    }

    @Test
    void callbackSchedulerNullPutsCallbacksBackOnTheEngineThreadsOfAServer() {
        RdmaServer s = RdmaServer.create().callbackScheduler(Schedulers.parallel()).callbackScheduler(null);
        assertNull(s.configuration().callbackScheduler());
    }

    @Test
    void metricsOffTakesANullRecorderOnEveryRole() {
        assertFalse(RdmaClient.create().metrics(true).metrics(false, null).configuration().metrics());
        assertFalse(RdmaServer.create().metrics(true).metrics(false, null).configuration().metrics());
        assertFalse(RdmaDatagram.create().metrics(true).metrics(false, null).configuration().metrics());
        assertNull(RdmaDatagram.create().metrics(false, null).configuration().metricsRecorder());
    }
}
