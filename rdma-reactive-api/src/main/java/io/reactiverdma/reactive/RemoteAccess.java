package io.reactiverdma.reactive;

/**
 * What a peer may do to memory registered with {@link RdmaMemory#register}. Memory is remotely accessible
 * only for the kinds of access the caller names (least privilege): pooled buffers from
 * {@link RdmaMemory#allocate(int)} have none.
 */
public enum RemoteAccess {
    /** The peer may RDMA READ the memory. */
    READ,
    /** The peer may RDMA WRITE (and WRITE with immediate) into the memory. */
    WRITE,
    /** The peer may run atomics (compare-and-swap, fetch-and-add) on 8-byte aligned words of the memory. */
    ATOMIC
}
