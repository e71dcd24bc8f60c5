package io.reactiverdma.cm;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * {@code struct rdma_conn_param}, immutable: every setter returns a copy. Defaults are safe on Soft-RoCE:
 * finite transport retries (6) and RNR retries (3); RNR retry 7 (retry forever) is refused, because a peer
 * that never posts a receive then soft-locks rxe.
 */
public final class ConnParam {
    /** Private data limits of rdma_cm over IB/RoCE (CM message payload minus rdma_cm's own header). */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;
    public static final int MAX_REJECT_PRIVATE_DATA = 148;
    public static final int MAX_UD_PRIVATE_DATA = 180;

    private static final ConnParam DEFAULTS = new ConnParam(new byte[0], 1, 1, 0, 6, 3, false, 0);

    private final byte[] privateData;
    private final int responderResources;
    private final int initiatorDepth;
    private final int flowControl;
    private final int retryCount;
    private final int rnrRetryCount;
    private final boolean srq;
    private final int qpNum;

    private ConnParam(byte[] privateData, int responderResources, int initiatorDepth, int flowControl,
            int retryCount, int rnrRetryCount, boolean srq, int qpNum) {
        this.privateData = privateData;
        this.responderResources = responderResources;
        this.initiatorDepth = initiatorDepth;
        this.flowControl = flowControl;
        this.retryCount = retryCount;
        this.rnrRetryCount = rnrRetryCount;
        this.srq = srq;
        this.qpNum = qpNum;
    }

    /** responder_resources 1, initiator_depth 1, retry_count 6, rnr_retry_count 3, no private data. */
    public static ConnParam create() {
        return DEFAULTS;
    }

    /** Private data for the peer (connect: at most 56 bytes, accept 196, on IB/RoCE). */
    public ConnParam privateData(byte[] data) {
        Objects.requireNonNull(data, "data");
        if (data.length > 255) {
            throw new IllegalArgumentException("privateData is " + data.length + " bytes; at most 255 fit "
                    + "private_data_len (and the CM protocol allows fewer: 56 to connect, 196 to accept)");
        }
        return new ConnParam(data.clone(), responderResources, initiatorDepth, flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    /** Outstanding RDMA READs/atomics this side accepts as target, 0..255. */
    public ConnParam responderResources(int n) {
        return new ConnParam(privateData, u8("responderResources", n), initiatorDepth, flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    /** Outstanding RDMA READs/atomics this side issues as initiator, 0..255. */
    public ConnParam initiatorDepth(int n) {
        return new ConnParam(privateData, responderResources, u8("initiatorDepth", n), flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    public ConnParam flowControl(boolean on) {
        return new ConnParam(privateData, responderResources, initiatorDepth, on ? 1 : 0, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    /** Transport retries after a timeout, 0..7 (7 is a count here, not "forever"). Ignored on accept. */
    public ConnParam retryCount(int n) {
        if (n < 0 || n > 7) {
            throw new IllegalArgumentException("retryCount must be 0..7, got " + n);
        }
        return new ConnParam(privateData, responderResources, initiatorDepth, flowControl, n, rnrRetryCount,
                srq, qpNum);
    }

    /**
     * RNR retries, 0..6. 7 means retry forever and is refused: on Soft-RoCE a peer that never posts a receive
     * then soft-locks rxe's kernel task.
     */
    public ConnParam rnrRetryCount(int n) {
        if (n == 7) {
            throw new IllegalArgumentException("rnrRetryCount 7 means retry forever, which soft-locks rxe when "
                    + "the peer never posts a receive; use 0..6");
        }
        if (n < 0 || n > 6) {
            throw new IllegalArgumentException("rnrRetryCount must be 0..6, got " + n);
        }
        return new ConnParam(privateData, responderResources, initiatorDepth, flowControl, retryCount, n, srq,
                qpNum);
    }

    /** Only when no QP is created on the id: whether the (user-managed) QP uses an SRQ, and its number. */
    public ConnParam userQp(int qpNum, boolean srq) {
        if (qpNum < 0 || qpNum > 0xffffff) {
            throw new IllegalArgumentException("qpNum must fit 24 bits, got " + qpNum);
        }
        return new ConnParam(privateData, responderResources, initiatorDepth, flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    public byte[] privateData() {
        return privateData.clone();
    }

    public int responderResources() {
        return responderResources;
    }

    public int initiatorDepth() {
        return initiatorDepth;
    }

    public int retryCount() {
        return retryCount;
    }

    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    int privateDataLength() {
        return privateData.length;
    }

    /** Checks the private data against {@code max} for the call that is about to use it. */
    void checkPrivateData(String call, int max) {
        if (privateData.length > max) {
            throw new IllegalArgumentException(call + ": privateData is " + privateData.length
                    + " bytes, more than the " + max + " the CM protocol carries for it");
        }
    }

    /**
     * Writes the struct at {@code offset} of {@code b}, with the private data copied to
     * {@code privateDataOffset} of the same buffer (whose native address is {@code bAddress}).
     */
    void writeTo(ByteBuffer b, long bAddress, int offset, int privateDataOffset) {
        for (int i = 0; i < CmStructs.ConnParamLayout.SIZE; i++) {
            b.put(offset + i, (byte) 0);
        }
        b.put(privateDataOffset, privateData);
        b.putLong(offset + CmStructs.ConnParamLayout.PRIVATE_DATA_OFFSET,
                privateData.length == 0 ? 0 : bAddress + privateDataOffset);
        b.put(offset + CmStructs.ConnParamLayout.PRIVATE_DATA_LEN_OFFSET, (byte) privateData.length);
        b.put(offset + CmStructs.ConnParamLayout.RESPONDER_RESOURCES_OFFSET, (byte) responderResources);
        b.put(offset + CmStructs.ConnParamLayout.INITIATOR_DEPTH_OFFSET, (byte) initiatorDepth);
        b.put(offset + CmStructs.ConnParamLayout.FLOW_CONTROL_OFFSET, (byte) flowControl);
        b.put(offset + CmStructs.ConnParamLayout.RETRY_COUNT_OFFSET, (byte) retryCount);
        b.put(offset + CmStructs.ConnParamLayout.RNR_RETRY_COUNT_OFFSET, (byte) rnrRetryCount);
        b.put(offset + CmStructs.ConnParamLayout.SRQ_OFFSET, (byte) (srq ? 1 : 0));
        b.putInt(offset + CmStructs.ConnParamLayout.QP_NUM_OFFSET, qpNum);
    }

    private static int u8(String name, int n) {
        if (n < 0 || n > 255) {
            throw new IllegalArgumentException(name + " must be 0..255, got " + n);
        }
        return n;
    }

    @Override
    public String toString() {
        return "ConnParam{privateData=" + privateData.length + " bytes, responderResources=" + responderResources
                + ", initiatorDepth=" + initiatorDepth + ", retryCount=" + retryCount + ", rnrRetryCount="
                + rnrRetryCount + (qpNum != 0 ? ", qpNum=" + qpNum + ", srq=" + srq : "") + "}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnParam c && Arrays.equals(privateData, c.privateData)
                && responderResources == c.responderResources && initiatorDepth == c.initiatorDepth
                && flowControl == c.flowControl && retryCount == c.retryCount && rnrRetryCount == c.rnrRetryCount
                && srq == c.srq && qpNum == c.qpNum;
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(privateData), responderResources, initiatorDepth, retryCount,
                rnrRetryCount, qpNum);
    }
}
