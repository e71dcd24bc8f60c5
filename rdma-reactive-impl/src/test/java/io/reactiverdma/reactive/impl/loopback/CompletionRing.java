package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.CompletionQueue;

/**
 * The completions of a zero-cost completion queue ({@link LoopbackStack.Builder#zeroCost}) that its poller
 * thread wrote itself at post time: {@code struct ibv_wc} fields in preallocated parallel arrays, so a
 * completion costs no object. Confined to that one thread: no lock, no volatile. It grows (allocating) only
 * when more completions are unpolled than the CQ has entries, which the real device would report as an
 * overflow (the queue counts and raises it).
 */
final class CompletionRing {
    private int[] qpNum;
    private long[] wrId;
    private int[] status;
    private int[] opcode;
    private int[] byteLen;
    private int[] immData;
    private int[] wcFlags;
    private int head;
    private int count;

    CompletionRing(int capacity) {
        allocate(Math.max(1, capacity));
    }

    private void allocate(int capacity) {
        qpNum = new int[capacity];
        wrId = new long[capacity];
        status = new int[capacity];
        opcode = new int[capacity];
        byteLen = new int[capacity];
        immData = new int[capacity];
        wcFlags = new int[capacity];
    }

    int size() {
        return count;
    }

    /** Appends a completion; returns false when the ring had to grow (an overflow of the CQ's entries). */
    boolean add(int qp, long wr, int st, int op, int len, int imm, int flags) {
        boolean fitted = count < wrId.length;
        if (!fitted) {
            grow();
        }
        int at = head + count;
        if (at >= wrId.length) {
            at -= wrId.length;
        }
        qpNum[at] = qp;
        wrId[at] = wr;
        status[at] = st;
        opcode[at] = op;
        byteLen[at] = len;
        immData[at] = imm;
        wcFlags[at] = flags;
        count++;
        return fitted;
    }

    /**
     * Hands the oldest completion to {@code handler} after taking it off the ring, so completions the handler
     * posts meanwhile append behind it without overwriting it. Only when {@link #size()} is positive.
     */
    void dispatchOldest(CompletionQueue.Handler handler) {
        int at = head;
        int qp = qpNum[at];
        long wr = wrId[at];
        int st = status[at];
        int op = opcode[at];
        int len = byteLen[at];
        int imm = immData[at];
        int flags = wcFlags[at];
        head = at + 1 == wrId.length ? 0 : at + 1;
        count--;
        handler.onCompletion(qp, wr, st, op, 0, len, imm, flags);
    }

    private void grow() {
        int[] q = qpNum;
        long[] w = wrId;
        int[] s = status;
        int[] o = opcode;
        int[] b = byteLen;
        int[] im = immData;
        int[] f = wcFlags;
        int n = w.length;
        allocate(n * 2);
        for (int i = 0; i < count; i++) {
            int from = (head + i) % n;
            qpNum[i] = q[from];
            wrId[i] = w[from];
            status[i] = s[from];
            opcode[i] = o[from];
            byteLen[i] = b[from];
            immData[i] = im[from];
            wcFlags[i] = f[from];
        }
        head = 0;
    }
}
