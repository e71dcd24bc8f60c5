package io.reactiverdma.samples.bulk;

import java.util.Locale;

/** Who moves the bytes of a bulk transfer. */
public enum TransferMode {
    /** The sender RDMA-WRITEs (with immediate) into chunks the receiver advertised. */
    PUSH,
    /** The receiver RDMA-READs chunks the sender exposed and announced. */
    PULL;

    /** {@code push} or {@code pull}, as on the command line. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
