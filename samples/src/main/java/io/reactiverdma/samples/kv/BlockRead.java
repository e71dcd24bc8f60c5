package io.reactiverdma.samples.kv;

import reactor.core.publisher.Mono;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The life of a value block that the server fills with an RDMA READ from the client (PUT_REMOTE): reserved
 * before the READ is posted, then published when the READ succeeded, freed when it failed, and freed once
 * the connection is closed when the READ was cancelled (a client that sends a large PUT and disconnects).
 */
final class BlockRead {
    private BlockRead() {
    }

    /**
     * Completes once {@code read} filled {@code block} and the block was published for {@code key}; fails with
     * {@link KvException} when publishing failed (the block was freed) or with the READ's error (the block
     * was freed: a failed READ is finished with the block).
     *
     * @param connectionClosed completes once the connection's queue pair is destroyed (after that the
     *                         device no longer writes anything it was told to)
     * @param heldBack         counts blocks whose READ was cancelled before it finished
     */
    static Mono<Void> readThenPublish(KvTable t, byte[] key, int length, long block, Mono<Void> read,
                                      Mono<Void> connectionClosed, AtomicLong heldBack) {
        return read
                .then(Mono.fromRunnable(() -> t.publishBlock(key, length, block)))
                .onErrorResume(e -> {
                    if (!(e instanceof KvException)) {
                        t.free(block, length); // the READ failed: the device is done with the block
                    }
                    return Mono.error(e); // a KvException: publishBlock freed the block
                })
                .then()
                // Cancelled (the connection is closing mid-READ): the device may still write the block until
                // the READ is flushed, so it is held back until the connection's QP is destroyed, then freed
                // (and reused only after the table's reuse delay, like any freed block).
                .doOnCancel(() -> {
                    heldBack.incrementAndGet();
                    connectionClosed.subscribe(null, e -> t.free(block, length), () -> t.free(block, length));
                });
    }
}
