package io.reactiverdma.reactive.impl.metrics;

import io.micrometer.core.instrument.Metrics;
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
public abstract class EngineMetrics {
    public static final EngineMetrics NOOP = new Noop();

    /** The metrics of a connection on the device named {@code device} to {@code remote} (null: unknown). */
    public static EngineMetrics of(RdmaTransportConfig config, String device, InetSocketAddress remote) {
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

    /**
     * What tells shared completion queues apart in DeviceResources: connections reporting to different
     * recorders must not share a poller, whose poll-batch and stale-completion counts go to one recorder.
     */
    public abstract String cqKeySuffix();

    public abstract void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long bytes);

    public abstract void completionError(String statusName);

    public abstract void pollBatch(int n);

    public abstract void staleCompletion();

    public abstract void outstanding(int delta);

    public abstract void connections(int delta);

    public abstract void creditsWaiting(int delta);

    /** A datagram endpoint sent, received or dropped a datagram of {@code bytes} payload bytes. */
    public abstract void datagram(RdmaMetricsRecorder.DatagramOutcome outcome, long bytes);

    /** A datagram endpoint joined (+1) or left (-1) a multicast group. */
    public abstract void multicastGroups(int delta);

    /** Pinned receive-buffer memory of the device changed by {@code deltaBytes}. */
    public abstract void receiveMemory(long deltaBytes);

    /** Memory registered by the device's buffer pool changed by {@code deltaBytes}. */
    public abstract void registeredMemory(long deltaBytes);

    /** The device's buffer pool deregistered {@code count} idle slabs. */
    public abstract void slabsReleased(int count);

    /**
     * What tells recorders apart (the pool reports to each distinct recorder once, whichever connection
     * brought it); null when nothing is recorded.
     */
    public abstract Object recorderIdentity();

    /** A datagram endpoint created (+1) or destroyed (-1) an address handle. */
    public abstract void addressHandles(int delta);

    /** A datagram endpoint evicted a peer's address handle from its full cache. */
    public abstract void addressHandleEvicted();

    private static final class Noop extends EngineMetrics {
        @Override
        public String cqKeySuffix() {
            return "";
        }

        @Override
        public void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long bytes) {
        }

        @Override
        public void completionError(String statusName) {
        }

        @Override
        public void pollBatch(int n) {
        }

        @Override
        public void staleCompletion() {
        }

        @Override
        public void outstanding(int delta) {
        }

        @Override
        public void connections(int delta) {
        }

        @Override
        public void creditsWaiting(int delta) {
        }

        @Override
        public void datagram(RdmaMetricsRecorder.DatagramOutcome outcome, long bytes) {
        }

        @Override
        public void multicastGroups(int delta) {
        }

        @Override
        public void receiveMemory(long deltaBytes) {
        }

        @Override
        public void registeredMemory(long deltaBytes) {
        }

        @Override
        public void slabsReleased(int count) {
        }

        @Override
        public Object recorderIdentity() {
            return null;
        }

        @Override
        public void addressHandles(int delta) {
        }

        @Override
        public void addressHandleEvicted() {
        }
    }

    /** A recorder with this connection's device and peer filled in. */
    public static final class Bound extends EngineMetrics {
        private final RdmaMetricsRecorder recorder;
        private final String device;
        private final InetSocketAddress remote;

        public Bound(RdmaMetricsRecorder recorder, String device, InetSocketAddress remote) {
            this.recorder = recorder;
            this.device = device;
            this.remote = remote;
        }

        public RdmaMetricsRecorder recorder() {
            return recorder;
        }

        @Override
        public String cqKeySuffix() {
            return "/metrics@" + Integer.toHexString(System.identityHashCode(recorder));
        }

        @Override
        public void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long nBytes) {
            recorder.recordOperation(device, remote, op, success ? Outcome.SUCCESS : flushed ? Outcome.FLUSHED
                    : Outcome.ERROR, success ? latencyNs : 0, success ? nBytes : 0);
        }

        @Override
        public void completionError(String statusName) {
            recorder.recordCompletionError(device, remote, statusName);
        }

        @Override
        public void pollBatch(int n) {
            recorder.recordPollBatch(device, n);
        }

        @Override
        public void staleCompletion() {
            recorder.recordStaleCompletion(device);
        }

        @Override
        public void outstanding(int delta) {
            recorder.outstandingChanged(device, remote, delta);
        }

        @Override
        public void connections(int delta) {
            recorder.connectionsChanged(device, remote, delta);
        }

        @Override
        public void creditsWaiting(int delta) {
            recorder.creditsWaitingChanged(device, remote, delta);
        }

        @Override
        public void datagram(RdmaMetricsRecorder.DatagramOutcome outcome, long bytes) {
            recorder.recordDatagram(device, outcome, bytes);
        }

        @Override
        public void multicastGroups(int delta) {
            recorder.multicastGroupsChanged(device, delta);
        }

        @Override
        public void receiveMemory(long deltaBytes) {
            recorder.receiveMemoryChanged(device, deltaBytes);
        }

        @Override
        public void registeredMemory(long deltaBytes) {
            recorder.registeredMemoryChanged(device, deltaBytes);
        }

        @Override
        public void slabsReleased(int count) {
            recorder.slabsReleased(device, count);
        }

        @Override
        public Object recorderIdentity() {
            return recorder;
        }

        @Override
        public void addressHandles(int delta) {
            recorder.addressHandlesChanged(device, delta);
        }

        @Override
        public void addressHandleEvicted() {
            recorder.addressHandleEvicted(device);
        }
    }
}
