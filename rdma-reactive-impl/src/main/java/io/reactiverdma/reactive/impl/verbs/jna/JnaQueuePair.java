package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.QpAttrMask;
import io.reactiverdma.verbs.QpAttributes;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendWorkRequests;

final class JnaQueuePair implements QueuePair {
    private final io.reactiverdma.verbs.QueuePair qp;
    private final int maxInline;

    JnaQueuePair(io.reactiverdma.verbs.QueuePair qp) {
        this.qp = qp;
        this.maxInline = qp.capabilities().maxInlineData();
    }

    @Override
    public int qpNum() {
        return qp.qpNum();
    }

    @Override
    public int maxInlineData() {
        return maxInline;
    }

    @Override
    public void postSend(SendWorkRequests chain) {
        try {
            qp.postSend(chain);
        } catch (NativeCallException e) {
            throw new PostRefusedException(e.getMessage(), e.errno(), PostRefusedException.firstNotPosted(chain.failedIndex(), chain.count()), e);
        }
    }

    @Override
    public void postReceive(ReceiveWorkRequests chain) {
        try {
            qp.postReceive(chain);
        } catch (NativeCallException e) {
            throw new PostRefusedException(e.getMessage(), e.errno(), PostRefusedException.firstNotPosted(chain.failedIndex(), chain.count()), e);
        }
    }

    @Override
    public void toError() {
        qp.toError();
    }

    @Override
    public void minRnrTimer(int code) {
        qp.modify(new QpAttributes().minRnrTimer(code), QpAttrMask.MIN_RNR_TIMER);
    }
}
