package io.reactiverdma.verbs;

/** {@code enum ibv_send_flags}: per send work request ({@link SendWorkRequests#add}). */
public final class SendFlags {
    /** Wait for earlier RDMA READs and atomics to complete before starting this request. */
    public static final int FENCE = 1;
    /** Generate a completion (when the QP is not created with sq_sig_all). */
    public static final int SIGNALED = 1 << 1;
    /** Set the solicited-event bit: wakes a receiver that armed its CQ with solicitedOnly. */
    public static final int SOLICITED = 1 << 2;
    /** Copy the payload into the work queue entry: the buffer needs no MR and is free when post returns. */
    public static final int INLINE = 1 << 3;
    public static final int IP_CSUM = 1 << 4;

    private SendFlags() {
    }
}
