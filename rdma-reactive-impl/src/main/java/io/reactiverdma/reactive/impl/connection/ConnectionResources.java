package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionQueueHandle;
import io.reactiverdma.reactive.impl.device.ControlWords;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import reactor.util.annotation.Nullable;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;

/**
 * What one connection holds of its device, created together (on the rdma_cm thread, for an id whose route
 * is resolved or a connect request's id) and released in reverse: its CQ reservation (and so its poller),
 * its queue pair, its credit word (with the memory window onto it, where the device has windows) and its
 * receive buffers. If creating one of them fails, those created
 * before are released again and nothing leaks.
 */
final class ConnectionResources {
    final DeviceResources device;
    final CompletionQueueHandle cq;
    final int cqEntries;
    final QueuePair qp;
    final ControlWords.Slot creditWord;
    /** The type 2 window the peer writes {@link #creditWord} through; null without windows or credits. */
    final MemoryWindow creditWindow;
    final EngineBuffer[] receiveBuffers;
    final int inlineLimit;
    /** Whether this side offers credits: asked for, and inline WRITEs of 8 bytes are possible. */
    final boolean creditsOffered;
    /** Whether the QP receives from a server's shared receive queue. */
    final boolean onSharedReceiveQueue;

    /**
     * With {@code srq} the QP receives from it: no receive buffers of its own, and the QP is on the SRQ's CQ,
     * where it reserves its send queue only (the SRQ reserved its receives).
     */
    ConnectionResources(CmId id, DeviceResources device, RdmaTransportConfig config, EngineMetrics metrics,
            @Nullable SharedReceives srq) {
        this.device = device;
        this.onSharedReceiveQueue = srq != null;
        int sendDepth = config.option(RdmaOption.SEND_QUEUE_DEPTH);
        int recvDepth = srq == null ? config.option(RdmaOption.RECEIVE_QUEUE_DEPTH) : 0;
        int bufferSize = config.option(RdmaOption.RECEIVE_BUFFER_SIZE);
        int sqDepth = sendDepth + 1 + CreditWordHandshake.SEND_SLOTS; // + the credit update's own slot, the handshake's
        // On an SRQ the peer's hello lands in an SRQ buffer: no receive slot of the handshake's own.
        int rqDepth = srq == null ? recvDepth + CreditWordHandshake.RECEIVE_SLOTS : 0;
        this.cqEntries = sqDepth + rqDepth;
        if (srq == null) {
            this.cq = device.acquireCq(config, cqEntries, metrics);
        } else if (srq.cq.tryReserve(cqEntries)) {
            this.cq = srq.cq;
        } else {
            throw new RdmaException(srq + ": its completion queue has no room for another connection's "
                    + cqEntries + " send entries (lower SEND_QUEUE_DEPTH, or spread clients over more servers)");
        }
        QueuePair q = null;
        ControlWords.Slot word = null;
        MemoryWindow window = null;
        EngineBuffer[] buffers = new EngineBuffer[recvDepth];
        try {
            int askInline = Math.max(config.option(RdmaOption.MAX_INLINE_DATA), 8);
            q = id.createQueuePair(device.pd, cq.cq, new QpSpec(sqDepth, rqDepth, askInline,
                    srq == null ? null : srq.srq));
            int grantedInline = q.maxInlineData();
            this.inlineLimit = Math.min(config.option(RdmaOption.MAX_INLINE_DATA), grantedInline);
            // Credit updates are 8-byte inline WRITEs: inline means the value is copied at post time, so a
            // later update never races the device reading an earlier one.
            this.creditsOffered = config.option(RdmaOption.CREDIT_FLOW_CONTROL) && grantedInline >= 8;
            word = device.controlWords.allocate();
            if (device.memoryWindows && creditsOffered) {
                window = device.pd.allocateWindow();
            }
            for (int i = 0; i < recvDepth; i++) {
                buffers[i] = device.pool.allocatePooled(bufferSize);
            }
        } catch (RuntimeException e) {
            for (EngineBuffer b : buffers) {
                if (b != null) {
                    b.release();
                }
            }
            if (window != null) {
                window.deallocate();
            }
            if (word != null) {
                device.controlWords.free(word);
            }
            if (q != null) {
                id.destroyQueuePair();
            }
            device.releaseCq(cq, cqEntries);
            throw e;
        }
        metrics.receiveMemory((long) recvDepth * bufferSize);
        device.pool.attachMetrics(metrics);
        this.qp = q;
        this.creditWord = word;
        this.creditWindow = window;
        this.receiveBuffers = buffers;
    }

    /**
     * Deallocates the credit word's window: before the QP is destroyed (rdma_cm thread), because a bound type
     * 2 window holds on to its QP. The QP is in ERR by then, so nothing arrives through the window any more.
     */
    void deallocateWindow() {
        if (creditWindow != null) {
            try {
                creditWindow.deallocate();
            } catch (RuntimeException e) {
                EngineLog.error("ibv_dealloc_mw of a credit word's window failed", e);
            }
        }
    }

    /**
     * Gives back the credit word and the CQ reservation, once the QP is destroyed (the receive buffers go
     * back through the receive queue, each when its message is released).
     */
    void release() {
        device.controlWords.free(creditWord);
        device.releaseCq(cq, cqEntries);
    }
}
