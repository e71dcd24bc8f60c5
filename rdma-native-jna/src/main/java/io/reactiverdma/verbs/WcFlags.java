package io.reactiverdma.verbs;

/** {@code enum ibv_wc_flags}: bits of {@link WorkCompletions#wcFlags(int)}. */
public final class WcFlags {
    /** A GRH is present in the first 40 bytes of the receive buffer (UD). */
    public static final int GRH = 1;
    /** The completion carries immediate data ({@link WorkCompletions#immData(int)}). */
    public static final int WITH_IMM = 1 << 1;
    public static final int IP_CSUM_OK = 1 << 2;
    /** The completion carries an invalidated rkey. */
    public static final int WITH_INV = 1 << 3;

    private WcFlags() {
    }
}
