package io.reactiverdma.reactive;

/**
 * A work request completed with an error status ({@code struct ibv_wc.status != IBV_WC_SUCCESS}): the
 * operation's {@code Mono} fails with this. Carries what the device reported.
 */
public class RdmaCompletionException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final OperationType operation;
    private final int status;
    private final String statusName;
    private final int vendorError;

    public RdmaCompletionException(OperationType operation, int status, String statusName, int vendorError,
            String detail) {
        super(operation + " failed: completion status " + statusName + " (" + status + "), vendor error 0x"
                + Integer.toHexString(vendorError) + (detail == null || detail.isEmpty() ? "" : ": " + detail));
        this.operation = operation;
        this.status = status;
        this.statusName = statusName;
        this.vendorError = vendorError;
    }

    /** The operation (work request opcode) that failed. */
    public OperationType operation() {
        return operation;
    }

    /** The raw {@code enum ibv_wc_status} value. */
    public int status() {
        return status;
    }

    /** The status' name, for example {@code REM_ACCESS_ERR} or {@code RNR_RETRY_EXC_ERR}. */
    public String statusName() {
        return statusName;
    }

    /** The device's vendor error code ({@code wc.vendor_err}). */
    public int vendorError() {
        return vendorError;
    }
}
