package io.reactiverdma.reactive.impl;

import io.micrometer.core.instrument.Metrics;
import io.reactiverdma.cm.RdmaCmId;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMetricsRecorder;
import io.reactiverdma.reactive.RdmaMetricsRecorder.Outcome;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;

import java.net.InetSocketAddress;
import java.util.function.Supplier;

/**
 * What one connection (and the completion poller it shares) reports, bound to its device and peer: the
 * engine's side of {@link RdmaMetricsRecorder}. A connection with metrics off gets {@link #NOOP}; with
 * {@code metrics(true)} the meters go to Micrometer's global registry through {@link MicrometerRdmaRecorder}
 * (as Reactor Netty's {@code metrics(true)}), with {@code metrics(true, recorder)} to the recorder supplied.
 * The meters themselves are documented in docs/metrics-reference.md.
 */
abstract class EngineMetrics {
    static final EngineMetrics NOOP = new Noop();

    /** The metrics of a connection on {@code device} whose rdma_cm id is {@code id} (its peer, when known). */
    static EngineMetrics of(RdmaTransportConfig config, DeviceResources device, RdmaCmId id) {
        if (!config.metrics()) {
            return NOOP;
        }
        return of(config, device.context.deviceName(), peerOf(id));
    }

    /** The metrics of a connection on the device named {@code device} to {@code remote} (null: unknown). */
    static EngineMetrics of(RdmaTransportConfig config, String device, InetSocketAddress remote) {
        if (!config.metrics()) {
            return NOOP;
        }
        Supplier<? extends RdmaMetricsRecorder> supplier = config.metricsRecorder();
        RdmaMetricsRecorder recorder = supplier != null ? supplier.get() : MicrometerRdmaRecorder.of(Metrics.globalRegistry);
        if (recorder == null) {
            throw new NullPointerException("the metrics recorder supplier of " + config + " returned null");
        }
        return new Bound(recorder, device, remote);
    }

    private static InetSocketAddress peerOf(RdmaCmId id) {
        try {
            return id.peerAddress();
        } catch (RuntimeException e) {
            return null; // meters then say "unknown": a missing address must not fail the connection
        }
    }

    /**
     * What tells shared completion queues apart in DeviceResources: connections reporting to different
     * recorders must not share a poller, whose poll-batch and stale-completion counts go to one recorder.
     */
    abstract String cqKeySuffix();

    abstract void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long bytes);

    abstract void completionError(String statusName);

    abstract void pollBatch(int n);

    abstract void staleCompletion();

    abstract void outstanding(int delta);

    abstract void connections(int delta);

    abstract void creditsWaiting(int delta);

    private static final class Noop extends EngineMetrics {
        @Override
        String cqKeySuffix() {
            return "";
        }

        @Override
        void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long bytes) {
        }

        @Override
        void completionError(String statusName) {
        }

        @Override
        void pollBatch(int n) {
        }

        @Override
        void staleCompletion() {
        }

        @Override
        void outstanding(int delta) {
        }

        @Override
        void connections(int delta) {
        }

        @Override
        void creditsWaiting(int delta) {
        }
    }

    /** A recorder with this connection's device and peer filled in. */
    static final class Bound extends EngineMetrics {
        private final RdmaMetricsRecorder recorder;
        private final String device;
        private final InetSocketAddress remote;

        Bound(RdmaMetricsRecorder recorder, String device, InetSocketAddress remote) {
            this.recorder = recorder;
            this.device = device;
            this.remote = remote;
        }

        RdmaMetricsRecorder recorder() {
            return recorder;
        }

        @Override
        String cqKeySuffix() {
            return "/metrics@" + Integer.toHexString(System.identityHashCode(recorder));
        }

        @Override
        void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long nBytes) {
            recorder.recordOperation(device, remote, op, success ? Outcome.SUCCESS : flushed ? Outcome.FLUSHED
                    : Outcome.ERROR, success ? latencyNs : 0, success ? nBytes : 0);
        }

        @Override
        void completionError(String statusName) {
            recorder.recordCompletionError(device, remote, statusName);
        }

        @Override
        void pollBatch(int n) {
            recorder.recordPollBatch(device, n);
        }

        @Override
        void staleCompletion() {
            recorder.recordStaleCompletion(device);
        }

        @Override
        void outstanding(int delta) {
            recorder.outstandingChanged(device, remote, delta);
        }

        @Override
        void connections(int delta) {
            recorder.connectionsChanged(device, remote, delta);
        }

        @Override
        void creditsWaiting(int delta) {
            recorder.creditsWaitingChanged(device, remote, delta);
        }
    }
}
