package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * What {@link ProtectionDomain#createQueuePair} (or {@code rdma_create_qp}, through {@link #writeTo(Pointer)})
 * creates: type, completion queues, optional SRQ and queue sizes. A mutable builder; defaults: 16 send and
 * 16 receive WRs, 1 SGE each, no inline data, only SIGNALED sends complete.
 * <pre>
 * struct ibv_qp_init_attr {
 *     void              *qp_context;
 *     struct ibv_cq     *send_cq;
 *     struct ibv_cq     *recv_cq;
 *     struct ibv_srq    *srq;
 *     struct ibv_qp_cap  cap;
 *     enum ibv_qp_type   qp_type;
 *     int                sq_sig_all;
 * };
 * </pre>
 */
@NativeStruct(value = "struct ibv_qp_init_attr", header = "infiniband/verbs.h")
public final class QpInitAttributes {
    public static final int SIZE = 64;
    @NativeField("qp_context")
    public static final int QP_CONTEXT_OFFSET = 0;
    @NativeField("send_cq")
    public static final int SEND_CQ_OFFSET = 8;
    @NativeField("recv_cq")
    public static final int RECV_CQ_OFFSET = 16;
    @NativeField("srq")
    public static final int SRQ_OFFSET = 24;
    @NativeField("cap")
    public static final int CAP_OFFSET = 32;
    @NativeField("cap.max_send_wr")
    public static final int CAP_MAX_SEND_WR_OFFSET = 32;
    @NativeField("cap.max_recv_wr")
    public static final int CAP_MAX_RECV_WR_OFFSET = 36;
    @NativeField("cap.max_send_sge")
    public static final int CAP_MAX_SEND_SGE_OFFSET = 40;
    @NativeField("cap.max_recv_sge")
    public static final int CAP_MAX_RECV_SGE_OFFSET = 44;
    @NativeField("cap.max_inline_data")
    public static final int CAP_MAX_INLINE_DATA_OFFSET = 48;
    @NativeField("qp_type")
    public static final int QP_TYPE_OFFSET = 52;
    @NativeField("sq_sig_all")
    public static final int SQ_SIG_ALL_OFFSET = 56;

    private QpType type;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private SharedReceiveQueue srq;
    private int maxSendWr = 16;
    private int maxRecvWr = 16;
    private int maxSendSge = 1;
    private int maxRecvSge = 1;
    private int maxInlineData;
    private boolean signalAll;
    private long qpContext;

    public QpInitAttributes(QpType type) {
        this.type = Objects.requireNonNull(type, "type");
    }

    /** An RC QP using one CQ for sends and receives. */
    public static QpInitAttributes rc(CompletionQueue cq) {
        return new QpInitAttributes(QpType.RC).sendCq(cq).recvCq(cq);
    }

    /** A UD QP using one CQ for sends and receives. */
    public static QpInitAttributes ud(CompletionQueue cq) {
        return new QpInitAttributes(QpType.UD).sendCq(cq).recvCq(cq);
    }

    public QpInitAttributes type(QpType type) {
        this.type = Objects.requireNonNull(type, "type");
        return this;
    }

    public QpInitAttributes sendCq(CompletionQueue sendCq) {
        this.sendCq = Objects.requireNonNull(sendCq, "sendCq");
        return this;
    }

    public QpInitAttributes recvCq(CompletionQueue recvCq) {
        this.recvCq = Objects.requireNonNull(recvCq, "recvCq");
        return this;
    }

    /** Receives come from this SRQ (null: the QP's own receive queue). */
    public QpInitAttributes srq(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    public QpInitAttributes maxSendWr(int n) {
        this.maxSendWr = positive("maxSendWr", n, 1);
        return this;
    }

    /** Receive queue depth (ignored with an SRQ). */
    public QpInitAttributes maxRecvWr(int n) {
        this.maxRecvWr = positive("maxRecvWr", n, 0);
        return this;
    }

    public QpInitAttributes maxSendSge(int n) {
        this.maxSendSge = positive("maxSendSge", n, 0);
        return this;
    }

    public QpInitAttributes maxRecvSge(int n) {
        this.maxRecvSge = positive("maxRecvSge", n, 0);
        return this;
    }

    /** Largest payload of an {@link SendFlags#INLINE} send. */
    public QpInitAttributes maxInlineData(int n) {
        this.maxInlineData = positive("maxInlineData", n, 0);
        return this;
    }

    /** True: every send completes ({@code sq_sig_all = 1}); false: only SIGNALED ones do. */
    public QpInitAttributes signalAll(boolean signalAll) {
        this.signalAll = signalAll;
        return this;
    }

    /** The {@code qp_context} pointer value (opaque to verbs; rdma_cm uses its own). */
    public QpInitAttributes qpContext(long qpContext) {
        this.qpContext = qpContext;
        return this;
    }

    private static int positive(String name, int n, int min) {
        if (n < min) {
            throw new IllegalArgumentException(name + " must be >= " + min + ", got " + n);
        }
        return n;
    }

    public QpType type() {
        return type;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    public SharedReceiveQueue srq() {
        return srq;
    }

    public int maxSendWr() {
        return maxSendWr;
    }

    public int maxRecvWr() {
        return maxRecvWr;
    }

    public int maxSendSge() {
        return maxSendSge;
    }

    public int maxRecvSge() {
        return maxRecvSge;
    }

    public int maxInlineData() {
        return maxInlineData;
    }

    public boolean signalAll() {
        return signalAll;
    }

    /** Throws NullPointerException naming a missing CQ, ClosedResourceException for a closed CQ/SRQ. */
    void validate() {
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        sendCq.ensureOpen();
        recvCq.ensureOpen();
        if (srq != null) {
            srq.ensureOpen();
        }
    }

    /**
     * Writes a complete {@code struct ibv_qp_init_attr} (64 bytes) at {@code offset} of a native-order
     * buffer. CQs not set are written as NULL (rdma_create_qp then uses the CQs of the rdma_cm_id);
     * closed CQs/SRQs are refused.
     */
    public void writeTo(ByteBuffer b, int offset) {
        Objects.requireNonNull(b, "buffer");
        Buffers.zero(b, offset, SIZE);
        b.putLong(offset + QP_CONTEXT_OFFSET, qpContext);
        b.putLong(offset + SEND_CQ_OFFSET, addressOf(sendCq));
        b.putLong(offset + RECV_CQ_OFFSET, addressOf(recvCq));
        if (srq != null) {
            srq.ensureOpen();
        }
        b.putLong(offset + SRQ_OFFSET, srq == null ? 0L : srq.address());
        new QpCapabilities(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData).writeTo(b, offset + CAP_OFFSET);
        b.putInt(offset + QP_TYPE_OFFSET, type.value());
        b.putInt(offset + SQ_SIG_ALL_OFFSET, signalAll ? 1 : 0);
    }

    private static long addressOf(CompletionQueue cq) {
        if (cq == null) {
            return 0L;
        }
        cq.ensureOpen();
        return cq.address();
    }

    /**
     * Writes a complete {@code struct ibv_qp_init_attr} to native memory (for example a JNA {@code Memory}
     * of at least {@link #SIZE} bytes passed to {@code rdma_create_qp}).
     */
    public void writeTo(Pointer p) {
        Objects.requireNonNull(p, "pointer");
        ByteBuffer b = Buffers.allocate(SIZE);
        writeTo(b, 0);
        byte[] bytes = new byte[SIZE];
        b.get(0, bytes, 0, SIZE);
        p.write(0, bytes, 0, SIZE);
        Reference.reachabilityFence(b);
    }

    /** The granted capabilities a create call wrote back into the struct at {@code p}. */
    public static QpCapabilities readCapabilities(Pointer p) {
        Objects.requireNonNull(p, "pointer");
        ByteBuffer b = p.getByteBuffer(CAP_OFFSET, 20).order(java.nio.ByteOrder.nativeOrder());
        return QpCapabilities.read(b, 0);
    }

    @Override
    public String toString() {
        return "QpInitAttributes{" + type + ", send_wr=" + maxSendWr + ", recv_wr=" + maxRecvWr + ", send_sge="
                + maxSendSge + ", recv_sge=" + maxRecvSge + ", inline=" + maxInlineData + ", sig_all=" + signalAll
                + (srq != null ? ", srq" : "") + "}";
    }
}
