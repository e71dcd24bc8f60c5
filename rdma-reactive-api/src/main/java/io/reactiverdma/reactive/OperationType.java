package io.reactiverdma.reactive;

/** The kinds of work request a connection posts; named in errors and used as the {@code op} metric tag. */
public enum OperationType {
    SEND("send"),
    SEND_WITH_IMMEDIATE("send_imm"),
    RECEIVE("recv"),
    WRITE("write"),
    WRITE_WITH_IMMEDIATE("write_imm"),
    READ("read"),
    COMPARE_AND_SWAP("cas"),
    FETCH_AND_ADD("faa"),
    /** The framework's own flow-control update (an RDMA WRITE of the receive credit counter). */
    CREDIT_UPDATE("credit"),
    /** The bind of a memory window that exposes a buffer to one connection ({@link RdmaConnection#expose}). */
    BIND_WINDOW("bind_mw"),
    /** The invalidation of such a window ({@link ExposedRegion#revoke()}). */
    INVALIDATE_WINDOW("local_inv");

    private final String tag;

    OperationType(String tag) {
        this.tag = tag;
    }

    /** The short lower-case name used as a metric tag value. */
    public String tag() {
        return tag;
    }
}
