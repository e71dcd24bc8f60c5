package io.reactiverdma.natives;

/**
 * A call into libibverbs or librdmacm failed. Names the call, the errno it reported and that errno's
 * {@code strerror} text, for example {@code ibv_reg_mr failed: errno 12 (Cannot allocate memory)}.
 */
public class NativeCallException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    public NativeCallException(String call, int errno) {
        this(call, errno, null);
    }

    /**
     * @param call   the C function that failed, for example {@code "ibv_create_qp"}
     * @param errno  the errno it reported (positive), or 0 when it gave none
     * @param detail extra text explaining the usual cause, or {@code null}
     */
    public NativeCallException(String call, int errno, String detail) {
        super(format(call, errno, detail));
        this.call = call;
        this.errno = errno;
    }

    private static String format(String call, int errno, String detail) {
        StringBuilder sb = new StringBuilder(call).append(" failed: errno ").append(errno)
                .append(" (").append(errno == 0 ? "no errno reported" : Errno.describe(errno)).append(')');
        if (detail != null && !detail.isEmpty()) {
            sb.append(": ").append(detail);
        }
        return sb.toString();
    }

    /** The C function that failed, for example {@code "ibv_create_qp"}. */
    public String call() {
        return call;
    }

    /** The errno the call reported (positive), or 0 when it gave none. */
    public int errno() {
        return errno;
    }
}
