package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

/**
 * An RDMA WRITE, WRITE_WITH_IMMEDIATE or READ of all of its local buffer (the caller's, held) to or from a
 * remote region ({@link Operation#oneSided}); completes empty. Only a WRITE without immediate goes inline.
 */
final class OneSidedOperation extends Operation {
    private final long remoteAddress;
    private final int rkey;
    private final int immediate;

    OneSidedOperation(SendQueue queue, OperationType type, EngineBuffer local, RemoteRegion remote, int immediate) {
        super(queue, type, local, false, local.length());
        if (type != OperationType.WRITE && type != OperationType.WRITE_WITH_IMMEDIATE && type != OperationType.READ) {
            throw new IllegalArgumentException("not a one-sided operation: " + type);
        }
        this.remoteAddress = remote.address();
        this.rkey = remote.rkey();
        this.immediate = immediate;
    }

    @Override
    boolean writeWorkRequest(SendWorkRequests wr, long wrId, int inlineLimit) {
        WrOpcode opcode = switch (type) {
            case WRITE -> WrOpcode.RDMA_WRITE;
            case WRITE_WITH_IMMEDIATE -> WrOpcode.RDMA_WRITE_WITH_IMM;
            default -> WrOpcode.RDMA_READ;
        };
        int length = length();
        boolean inline = type == OperationType.WRITE && length <= inlineLimit && length > 0;
        int i = wr.add(wrId, opcode, inline ? SendFlags.INLINE : 0);
        if (length > 0) {
            wr.sge(i, local.address(), length, local.lkey());
        }
        wr.rdma(i, remoteAddress, rkey);
        if (type == OperationType.WRITE_WITH_IMMEDIATE) {
            wr.immData(i, immediate);
        }
        return inline;
    }
}
