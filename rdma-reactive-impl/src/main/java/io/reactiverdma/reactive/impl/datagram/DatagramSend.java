package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaMetricsRecorder.DatagramOutcome;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.verbs.WcStatus;
import reactor.core.publisher.MonoSink;
import reactor.util.annotation.Nullable;

/**
 * One datagram send: its bytes (a copy, staged into a send slot when it is posted) or the caller's registered
 * buffer (posted as it is, held until the send completes), where it goes (a held {@link Destination}), and
 * its subscriber. Finished exactly once, by {@link #succeeded}, {@link #failed} or {@link #refused}, which let go of what it
 * holds.
 */
final class DatagramSend {
    @Nullable
    final byte[] data;
    @Nullable
    final EngineBuffer buffer;
    final int length;
    final Destination destination;
    final boolean hasImmediate;
    final int immediate;
    private final MonoSink<Void> sink;
    /** The send slot its copy was staged in, or -1. */
    int slot = -1;
    /** Whether {@link #buffer} is held (from its post until the send finishes). */
    boolean holdsBuffer;

    DatagramSend(@Nullable byte[] data, @Nullable EngineBuffer buffer, int length, Destination destination,
            boolean hasImmediate, int immediate, MonoSink<Void> sink) {
        this.data = data;
        this.buffer = buffer;
        this.length = length;
        this.destination = destination;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
        this.sink = sink;
    }

    OperationType type() {
        return hasImmediate ? OperationType.SEND_WITH_IMMEDIATE : OperationType.SEND;
    }

    void succeeded(EngineMetrics metrics) {
        letGo();
        metrics.datagram(DatagramOutcome.SENT, length);
        sink.success();
    }

    /** What it failed with when the device completed it with {@code status} (not a flush after the close). */
    RdmaCompletionException completionError(int status, int vendorErr) {
        WcStatus s = WcStatus.of(status);
        return new RdmaCompletionException(type(), status, s == null ? "UNKNOWN" : s.name(), vendorErr, "a datagram send");
    }

    /** It was posted and failed (counted as a failed send). */
    void failed(Throwable error, EngineMetrics metrics) {
        metrics.datagram(DatagramOutcome.SEND_FAILED, 0);
        refused(error);
    }

    /** It was never posted (the endpoint closed, its group was left, its buffer was released). */
    void refused(Throwable error) {
        letGo();
        sink.error(error);
    }

    private void letGo() {
        destination.release();
        if (holdsBuffer) {
            holdsBuffer = false;
            buffer.unretain();
        }
    }
}
