package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Attributes for {@link QueuePair#modify} (with a {@link QpAttrMask}), and the result of
 * {@link QueuePair#query}. A mutable builder whose setters validate and return {@code this}.
 *
 * <p>Defaults are safe on Soft-RoCE and sensible elsewhere: port 1, P_Key index 0, path MTU 1024, ACK
 * timeout 14 (4.096 us * 2^14 = 67 ms), retry count 6, RNR retry 3, minimum RNR timer 12 (0.64 ms), one
 * outstanding RDMA READ/atomic each way, access LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE|REMOTE_ATOMIC,
 * Q_Key 0x11111111 (UD), PSNs 0.
 *
 * <p>Two values are refused because they make a QP wait forever: {@code rnr_retry 7} (retry forever after an
 * RNR NAK: a peer that never posts a receive then soft-locks rxe's kernel task) and {@code timeout 0} (wait
 * forever for an ACK). Use {@code rnrRetry(0)} to see RNR errors at once in tests.
 * <pre>
 * struct ibv_qp_attr {
 *     enum ibv_qp_state   qp_state;
 *     enum ibv_qp_state   cur_qp_state;
 *     enum ibv_mtu        path_mtu;
 *     enum ibv_mig_state  path_mig_state;
 *     uint32_t            qkey;
 *     uint32_t            rq_psn;
 *     uint32_t            sq_psn;
 *     uint32_t            dest_qp_num;
 *     unsigned int        qp_access_flags;
 *     struct ibv_qp_cap   cap;
 *     struct ibv_ah_attr  ah_attr;
 *     struct ibv_ah_attr  alt_ah_attr;
 *     uint16_t            pkey_index;
 *     uint16_t            alt_pkey_index;
 *     uint8_t             en_sqd_async_notify;
 *     uint8_t             sq_draining;
 *     uint8_t             max_rd_atomic;
 *     uint8_t             max_dest_rd_atomic;
 *     uint8_t             min_rnr_timer;
 *     uint8_t             port_num;
 *     uint8_t             timeout;
 *     uint8_t             retry_cnt;
 *     uint8_t             rnr_retry;
 *     uint8_t             alt_port_num;
 *     uint8_t             alt_timeout;
 *     uint32_t            rate_limit;
 * };
 * </pre>
 * Alternate path (APM) fields are written as zero and not exposed.
 */
@NativeStruct(value = "struct ibv_qp_attr", header = "infiniband/verbs.h")
public final class QpAttributes {
    public static final int SIZE = 144;
    @NativeField("qp_state")
    public static final int QP_STATE_OFFSET = 0;
    @NativeField("cur_qp_state")
    public static final int CUR_QP_STATE_OFFSET = 4;
    @NativeField("path_mtu")
    public static final int PATH_MTU_OFFSET = 8;
    @NativeField("path_mig_state")
    public static final int PATH_MIG_STATE_OFFSET = 12;
    @NativeField("qkey")
    public static final int QKEY_OFFSET = 16;
    @NativeField("rq_psn")
    public static final int RQ_PSN_OFFSET = 20;
    @NativeField("sq_psn")
    public static final int SQ_PSN_OFFSET = 24;
    @NativeField("dest_qp_num")
    public static final int DEST_QP_NUM_OFFSET = 28;
    @NativeField("qp_access_flags")
    public static final int QP_ACCESS_FLAGS_OFFSET = 32;
    @NativeField("cap")
    public static final int CAP_OFFSET = 36;
    @NativeField("cap.max_send_wr")
    public static final int CAP_MAX_SEND_WR_OFFSET = 36;
    @NativeField("cap.max_recv_wr")
    public static final int CAP_MAX_RECV_WR_OFFSET = 40;
    @NativeField("cap.max_send_sge")
    public static final int CAP_MAX_SEND_SGE_OFFSET = 44;
    @NativeField("cap.max_recv_sge")
    public static final int CAP_MAX_RECV_SGE_OFFSET = 48;
    @NativeField("cap.max_inline_data")
    public static final int CAP_MAX_INLINE_DATA_OFFSET = 52;
    @NativeField("ah_attr")
    public static final int AH_ATTR_OFFSET = 56;
    @NativeField("ah_attr.grh.dgid")
    public static final int AH_ATTR_GRH_DGID_OFFSET = 56;
    @NativeField("ah_attr.is_global")
    public static final int AH_ATTR_IS_GLOBAL_OFFSET = 85;
    @NativeField("ah_attr.port_num")
    public static final int AH_ATTR_PORT_NUM_OFFSET = 86;
    @NativeField("alt_ah_attr")
    public static final int ALT_AH_ATTR_OFFSET = 88;
    @NativeField("pkey_index")
    public static final int PKEY_INDEX_OFFSET = 120;
    @NativeField("alt_pkey_index")
    public static final int ALT_PKEY_INDEX_OFFSET = 122;
    @NativeField("en_sqd_async_notify")
    public static final int EN_SQD_ASYNC_NOTIFY_OFFSET = 124;
    @NativeField("sq_draining")
    public static final int SQ_DRAINING_OFFSET = 125;
    @NativeField("max_rd_atomic")
    public static final int MAX_RD_ATOMIC_OFFSET = 126;
    @NativeField("max_dest_rd_atomic")
    public static final int MAX_DEST_RD_ATOMIC_OFFSET = 127;
    @NativeField("min_rnr_timer")
    public static final int MIN_RNR_TIMER_OFFSET = 128;
    @NativeField("port_num")
    public static final int PORT_NUM_OFFSET = 129;
    @NativeField("timeout")
    public static final int TIMEOUT_OFFSET = 130;
    @NativeField("retry_cnt")
    public static final int RETRY_CNT_OFFSET = 131;
    @NativeField("rnr_retry")
    public static final int RNR_RETRY_OFFSET = 132;
    @NativeField("alt_port_num")
    public static final int ALT_PORT_NUM_OFFSET = 133;
    @NativeField("alt_timeout")
    public static final int ALT_TIMEOUT_OFFSET = 134;
    @NativeField("rate_limit")
    public static final int RATE_LIMIT_OFFSET = 136;

    /** Default ACK timeout exponent: 4.096 us * 2^14 = 67 ms. */
    public static final int DEFAULT_TIMEOUT = 14;
    public static final int DEFAULT_RETRY_CNT = 6;
    public static final int DEFAULT_RNR_RETRY = 3;
    /** Default minimum RNR NAK timer code: 12 = 0.64 ms. */
    public static final int DEFAULT_MIN_RNR_TIMER = 12;
    public static final int DEFAULT_QKEY = 0x11111111;

    private QpState qpState = QpState.RESET;
    private QpState curQpState = QpState.RESET;
    private Mtu pathMtu = Mtu.MTU_1024;
    private int pathMigState;
    private int qkey = DEFAULT_QKEY;
    private int rqPsn;
    private int sqPsn;
    private int destQpNum;
    private int accessFlags = AccessFlags.ALL_REMOTE;
    private QpCapabilities cap = new QpCapabilities(0, 0, 0, 0, 0);
    private AddressHandleAttributes addressVector = new AddressHandleAttributes();
    private int pkeyIndex;
    private boolean enSqdAsyncNotify;
    private boolean sqDraining;
    private int maxRdAtomic = 1;
    private int maxDestRdAtomic = 1;
    private int minRnrTimer = DEFAULT_MIN_RNR_TIMER;
    private int portNum = 1;
    private int timeout = DEFAULT_TIMEOUT;
    private int retryCnt = DEFAULT_RETRY_CNT;
    private int rnrRetry = DEFAULT_RNR_RETRY;
    private int rateLimit;

    public QpAttributes() {
    }

    /** The state to move to ({@link QpAttrMask#STATE}). */
    public QpAttributes qpState(QpState state) {
        this.qpState = Objects.requireNonNull(state, "state");
        return this;
    }

    /** The state the QP is assumed to be in ({@link QpAttrMask#CUR_STATE}). */
    public QpAttributes curQpState(QpState state) {
        this.curQpState = Objects.requireNonNull(state, "state");
        return this;
    }

    /** Path MTU (at most the port's active MTU). */
    public QpAttributes pathMtu(Mtu mtu) {
        this.pathMtu = Objects.requireNonNull(mtu, "mtu");
        return this;
    }

    /** Q_Key of a UD QP. */
    public QpAttributes qkey(int qkey) {
        this.qkey = qkey;
        return this;
    }

    /** Receive PSN: must equal the peer's send PSN (24 bit). */
    public QpAttributes rqPsn(int psn) {
        this.rqPsn = psn("rqPsn", psn);
        return this;
    }

    /** Send PSN (24 bit). */
    public QpAttributes sqPsn(int psn) {
        this.sqPsn = psn("sqPsn", psn);
        return this;
    }

    /** The remote QP number of a connected QP (24 bit). */
    public QpAttributes destQpNum(int qpn) {
        this.destQpNum = AddressHandleAttributes.range("destQpNum", qpn, 0, 0xffffff);
        return this;
    }

    /** What the remote side may do ({@link AccessFlags} REMOTE_* bits). */
    public QpAttributes accessFlags(int flags) {
        AccessFlags.validate("accessFlags", flags);
        this.accessFlags = flags;
        return this;
    }

    /** New queue sizes ({@link QpAttrMask#CAP}; few providers allow resizing). */
    public QpAttributes capabilities(QpCapabilities cap) {
        this.cap = Objects.requireNonNull(cap, "cap");
        return this;
    }

    /** The remote end of a connected QP ({@link QpAttrMask#AV}); on RoCE it must be global. */
    public QpAttributes addressVector(AddressHandleAttributes av) {
        this.addressVector = Objects.requireNonNull(av, "av").copy();
        return this;
    }

    public QpAttributes pkeyIndex(int index) {
        this.pkeyIndex = AddressHandleAttributes.range("pkeyIndex", index, 0, 0xffff);
        return this;
    }

    public QpAttributes enSqdAsyncNotify(boolean notify) {
        this.enSqdAsyncNotify = notify;
        return this;
    }

    /** Outstanding RDMA READs/atomics this QP initiates (initiator depth). */
    public QpAttributes maxRdAtomic(int n) {
        this.maxRdAtomic = AddressHandleAttributes.range("maxRdAtomic", n, 0, 255);
        return this;
    }

    /** Outstanding RDMA READs/atomics this QP serves (responder resources). */
    public QpAttributes maxDestRdAtomic(int n) {
        this.maxDestRdAtomic = AddressHandleAttributes.range("maxDestRdAtomic", n, 0, 255);
        return this;
    }

    /** Code of the minimum RNR NAK delay the responder asks for (0..31; 12 = 0.64 ms, 0 = 655 ms). */
    public QpAttributes minRnrTimer(int code) {
        this.minRnrTimer = AddressHandleAttributes.range("minRnrTimer", code, 0, 31);
        return this;
    }

    /** The local port (from 1). */
    public QpAttributes portNum(int port) {
        this.portNum = AddressHandleAttributes.range("portNum", port, 1, 255);
        return this;
    }

    /**
     * ACK timeout exponent, 1..31: 4.096 us * 2^timeout. 0 (infinite) is refused: a lost peer would hang
     * the QP forever.
     */
    public QpAttributes timeout(int timeout) {
        this.timeout = checkTimeout(timeout);
        return this;
    }

    /** Transport retries after a timeout, 0..7. */
    public QpAttributes retryCnt(int n) {
        this.retryCnt = AddressHandleAttributes.range("retryCnt", n, 0, 7);
        return this;
    }

    /**
     * Retries after an RNR NAK (receiver had no receive posted), 0..6. 7 (retry forever) is refused: on
     * Soft-RoCE a peer that never posts a receive then soft-locks rxe's kernel task. 0 fails at once with
     * {@link WcStatus#RNR_RETRY_EXC_ERR}, which tests use.
     */
    public QpAttributes rnrRetry(int n) {
        this.rnrRetry = checkRnrRetry(n);
        return this;
    }

    /** Packet pacing rate limit in kbps (0 = none; needs provider support). */
    public QpAttributes rateLimit(int kbps) {
        if (kbps < 0) {
            throw new IllegalArgumentException("rateLimit must be >= 0, got " + kbps);
        }
        this.rateLimit = kbps;
        return this;
    }

    static int checkRnrRetry(int n) {
        if (n == 7) {
            throw new IllegalArgumentException("rnrRetry 7 means retry forever after an RNR NAK: a peer that never "
                    + "posts a receive then hangs the QP, and on Soft-RoCE (rxe) soft-locks the kernel's rxe task; "
                    + "use 0..6 (default " + DEFAULT_RNR_RETRY + ", 0 to fail at once)");
        }
        return AddressHandleAttributes.range("rnrRetry", n, 0, 6);
    }

    static int checkTimeout(int timeout) {
        if (timeout == 0) {
            throw new IllegalArgumentException("timeout 0 means wait forever for an ACK: a lost peer would hang the "
                    + "QP; use 1..31 (4.096 us * 2^timeout; default " + DEFAULT_TIMEOUT + " = 67 ms)");
        }
        return AddressHandleAttributes.range("timeout", timeout, 1, 31);
    }

    private static int psn(String name, int psn) {
        return AddressHandleAttributes.range(name, psn, 0, 0xffffff);
    }

    public QpState qpState() {
        return qpState;
    }

    public QpState curQpState() {
        return curQpState;
    }

    public Mtu pathMtu() {
        return pathMtu;
    }

    public int qkey() {
        return qkey;
    }

    public int rqPsn() {
        return rqPsn;
    }

    public int sqPsn() {
        return sqPsn;
    }

    public int destQpNum() {
        return destQpNum;
    }

    public int accessFlags() {
        return accessFlags;
    }

    public QpCapabilities capabilities() {
        return cap;
    }

    /** A copy of the address vector. */
    public AddressHandleAttributes addressVector() {
        return addressVector.copy();
    }

    public int pkeyIndex() {
        return pkeyIndex;
    }

    public boolean enSqdAsyncNotify() {
        return enSqdAsyncNotify;
    }

    /** Query result only: the send queue is draining (SQD). */
    public boolean sqDraining() {
        return sqDraining;
    }

    public int maxRdAtomic() {
        return maxRdAtomic;
    }

    public int maxDestRdAtomic() {
        return maxDestRdAtomic;
    }

    public int minRnrTimer() {
        return minRnrTimer;
    }

    public int portNum() {
        return portNum;
    }

    public int timeout() {
        return timeout;
    }

    public int retryCnt() {
        return retryCnt;
    }

    public int rnrRetry() {
        return rnrRetry;
    }

    public int rateLimit() {
        return rateLimit;
    }

    /**
     * Checks the fields a mask selects: refuses rnr_retry 7 and timeout 0 even when they came from a
     * {@link #read query} of another QP.
     */
    void validate(int mask) {
        if ((mask & QpAttrMask.RNR_RETRY) != 0) {
            checkRnrRetry(rnrRetry);
        }
        if ((mask & QpAttrMask.TIMEOUT) != 0) {
            checkTimeout(timeout);
        }
    }

    /** Writes a complete {@code struct ibv_qp_attr} (144 bytes) at {@code offset} of a native-order buffer. */
    public void writeTo(ByteBuffer b, int offset) {
        Objects.requireNonNull(b, "buffer");
        Buffers.zero(b, offset, SIZE);
        b.putInt(offset + QP_STATE_OFFSET, qpState.value());
        b.putInt(offset + CUR_QP_STATE_OFFSET, curQpState.value());
        b.putInt(offset + PATH_MTU_OFFSET, pathMtu.value());
        b.putInt(offset + PATH_MIG_STATE_OFFSET, pathMigState);
        b.putInt(offset + QKEY_OFFSET, qkey);
        b.putInt(offset + RQ_PSN_OFFSET, rqPsn);
        b.putInt(offset + SQ_PSN_OFFSET, sqPsn);
        b.putInt(offset + DEST_QP_NUM_OFFSET, destQpNum);
        b.putInt(offset + QP_ACCESS_FLAGS_OFFSET, accessFlags);
        cap.writeTo(b, offset + CAP_OFFSET);
        addressVector.writeTo(b, offset + AH_ATTR_OFFSET);
        b.putShort(offset + PKEY_INDEX_OFFSET, (short) pkeyIndex);
        b.put(offset + EN_SQD_ASYNC_NOTIFY_OFFSET, (byte) (enSqdAsyncNotify ? 1 : 0));
        b.put(offset + MAX_RD_ATOMIC_OFFSET, (byte) maxRdAtomic);
        b.put(offset + MAX_DEST_RD_ATOMIC_OFFSET, (byte) maxDestRdAtomic);
        b.put(offset + MIN_RNR_TIMER_OFFSET, (byte) minRnrTimer);
        b.put(offset + PORT_NUM_OFFSET, (byte) portNum);
        b.put(offset + TIMEOUT_OFFSET, (byte) timeout);
        b.put(offset + RETRY_CNT_OFFSET, (byte) retryCnt);
        b.put(offset + RNR_RETRY_OFFSET, (byte) rnrRetry);
        b.putInt(offset + RATE_LIMIT_OFFSET, rateLimit);
    }

    /** Writes a complete {@code struct ibv_qp_attr} to native memory of at least {@link #SIZE} bytes. */
    public void writeTo(Pointer p) {
        Objects.requireNonNull(p, "pointer");
        ByteBuffer b = Buffers.allocate(SIZE);
        writeTo(b, 0);
        byte[] bytes = new byte[SIZE];
        b.get(0, bytes, 0, SIZE);
        p.write(0, bytes, 0, SIZE);
        Reference.reachabilityFence(b);
    }

    /**
     * Reads a {@code struct ibv_qp_attr} at {@code offset} without validation (a query may return values the
     * setters refuse, such as rnr_retry 7 set by other software).
     */
    public static QpAttributes read(ByteBuffer b, int offset) {
        QpAttributes a = new QpAttributes();
        a.qpState = QpState.of(b.getInt(offset + QP_STATE_OFFSET));
        a.curQpState = QpState.of(b.getInt(offset + CUR_QP_STATE_OFFSET));
        Mtu mtu = Mtu.of(b.getInt(offset + PATH_MTU_OFFSET));
        a.pathMtu = mtu == null ? Mtu.MTU_256 : mtu;
        a.pathMigState = b.getInt(offset + PATH_MIG_STATE_OFFSET);
        a.qkey = b.getInt(offset + QKEY_OFFSET);
        a.rqPsn = b.getInt(offset + RQ_PSN_OFFSET);
        a.sqPsn = b.getInt(offset + SQ_PSN_OFFSET);
        a.destQpNum = b.getInt(offset + DEST_QP_NUM_OFFSET);
        a.accessFlags = b.getInt(offset + QP_ACCESS_FLAGS_OFFSET);
        a.cap = QpCapabilities.read(b, offset + CAP_OFFSET);
        a.addressVector = AddressHandleAttributes.read(b, offset + AH_ATTR_OFFSET);
        a.pkeyIndex = Short.toUnsignedInt(b.getShort(offset + PKEY_INDEX_OFFSET));
        a.enSqdAsyncNotify = b.get(offset + EN_SQD_ASYNC_NOTIFY_OFFSET) != 0;
        a.sqDraining = b.get(offset + SQ_DRAINING_OFFSET) != 0;
        a.maxRdAtomic = b.get(offset + MAX_RD_ATOMIC_OFFSET) & 0xff;
        a.maxDestRdAtomic = b.get(offset + MAX_DEST_RD_ATOMIC_OFFSET) & 0xff;
        a.minRnrTimer = b.get(offset + MIN_RNR_TIMER_OFFSET) & 0xff;
        a.portNum = b.get(offset + PORT_NUM_OFFSET) & 0xff;
        a.timeout = b.get(offset + TIMEOUT_OFFSET) & 0xff;
        a.retryCnt = b.get(offset + RETRY_CNT_OFFSET) & 0xff;
        a.rnrRetry = b.get(offset + RNR_RETRY_OFFSET) & 0xff;
        a.rateLimit = b.getInt(offset + RATE_LIMIT_OFFSET);
        return a;
    }

    @Override
    public String toString() {
        return "QpAttributes{state=" + qpState + ", mtu=" + pathMtu + ", dest_qp=" + destQpNum + ", rq_psn=" + rqPsn
                + ", sq_psn=" + sqPsn + ", qkey=0x" + Integer.toHexString(qkey) + ", access="
                + AccessFlags.describe(accessFlags) + ", port=" + portNum + ", pkey_index=" + pkeyIndex + ", timeout="
                + timeout + ", retry_cnt=" + retryCnt + ", rnr_retry=" + rnrRetry + ", min_rnr_timer=" + minRnrTimer
                + ", max_rd_atomic=" + maxRdAtomic + ", max_dest_rd_atomic=" + maxDestRdAtomic + ", cap=" + cap
                + ", av=" + addressVector + "}";
    }
}
