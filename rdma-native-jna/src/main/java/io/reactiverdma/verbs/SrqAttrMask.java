package io.reactiverdma.verbs;

/** {@code enum ibv_srq_attr_mask}: which fields {@link SharedReceiveQueue#modify} applies. */
public final class SrqAttrMask {
    /** Resize the SRQ (needs the device's SRQ_RESIZE capability). */
    public static final int MAX_WR = 1;
    /** Arm the limit: an SRQ_LIMIT_REACHED async event fires once fewer receives than this are queued. */
    public static final int LIMIT = 1 << 1;

    private SrqAttrMask() {
    }
}
