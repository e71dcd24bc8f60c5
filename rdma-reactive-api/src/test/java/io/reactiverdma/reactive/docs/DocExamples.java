package io.reactiverdma.reactive.docs;

import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.scheduler.Schedulers;

import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * The examples of docs/programming-guide.md that run without an RDMA device, as methods {@code DocExamplesTest}
 * runs and checks. Every code block of the guides is compiled from the Markdown itself by
 * {@code DocSnippetsCompileTest}; these two are also run. Keep each identical to its block in the guide.
 */
final class DocExamples {
    private DocExamples() {
    }

    /** Configuration: runs without a device (nothing is connected). */
    static RdmaClient configuredClient() {
        return RdmaClient.create()
                .host("10.0.0.1")
                .port(7471)
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, 64 * 1024)   // the largest message this side receives
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 32)
                .connectTimeout(Duration.ofSeconds(3))                // client only: option(CONNECT_TIMEOUT, ..)
                .option(RdmaOption.IDLE_STRATEGY, PollerIdleStrategy.backoff())
                .callbackScheduler(Schedulers.boundedElastic())     // user callbacks off the poller thread
                .metrics(true);
    }

    /** RemoteRegion's wire form: runs without a device. */
    static RemoteRegion regionRoundTrip(RemoteRegion region) {
        ByteBuffer message = ByteBuffer.allocate(RemoteRegion.ENCODED_SIZE + 4);
        region.writeTo(message).putInt(4096);          // the region, then an application field
        message.flip();
        RemoteRegion received = RemoteRegion.readFrom(message);
        int offset = message.getInt();
        return received.slice(offset, 8);
    }
}
