package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

/**
 * A COMPARE_AND_SWAP or FETCH_AND_ADD ({@link Operation#atomic}): the device writes the remote word's
 * previous value into the engine's 8-byte result word, which the operation emits (as a {@code Long}) after
 * reading it and before releasing the word. Its operands live here, not in every {@link Operation}.
 */
final class AtomicOperation extends ValueOperation {
    private final long remoteAddress;
    private final int rkey;
    private final long compareAdd;
    private final long swap;

    AtomicOperation(SendQueue queue, OperationType type, EngineBuffer result, RemoteRegion remote, long compareAdd,
            long swap) {
        super(queue, type, result, true, 8);
        if (type != OperationType.COMPARE_AND_SWAP && type != OperationType.FETCH_AND_ADD) {
            throw new IllegalArgumentException("not an atomic: " + type);
        }
        this.remoteAddress = remote.address();
        this.rkey = remote.rkey();
        this.compareAdd = compareAdd;
        this.swap = swap;
    }

    @Override
    boolean writeWorkRequest(SendWorkRequests wr, long wrId, int inlineLimit) {
        WrOpcode opcode = type == OperationType.COMPARE_AND_SWAP ? WrOpcode.ATOMIC_CMP_AND_SWP
                : WrOpcode.ATOMIC_FETCH_AND_ADD;
        int i = wr.add(wrId, opcode, 0);
        wr.sge(i, local.address(), 8, local.lkey());
        wr.atomic(i, remoteAddress, rkey, compareAdd, swap);
        return false;
    }

    /** The remote word's previous value, which the device wrote to the local word (host order). */
    @Override
    Object result() {
        return local.memory().getLong(local.offset());
    }
}
