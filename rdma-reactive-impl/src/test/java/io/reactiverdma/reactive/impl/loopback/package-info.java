/**
 * An in-JVM loopback RDMA stack implementing the engine's native boundary
 * ({@link io.reactiverdma.reactive.impl.verbs}), so the real engine runs end to end in host tests, with fault
 * injection ({@link io.reactiverdma.reactive.impl.loopback.LoopbackFaults}) and resource accounting
 * ({@link io.reactiverdma.reactive.impl.loopback.LoopbackResources}).
 *
 * <h2>Model</h2>
 * <ul>
 * <li>Unreliable datagrams and multicast ({@link io.reactiverdma.reactive.impl.loopback.LoopbackDatagrams}):
 * SIDR on RDMA_PS_UDP, UD QPs, a GRH like rxe's, silent drops, injected loss and join failures.</li>
 * <li>One "wire" thread per stack executes every work request of every device and generates every
 * completion; posting only validates and queues. Shared state is guarded by one fabric lock.</li>
 * <li>Memory: registrations get fake page-aligned, never overlapping, never reused address ranges (with a
 * guard page) and distinct lkey and rkey values (lkey != rkey, unlike rxe, so mixing them up is caught),
 * never reused, so stale keys fail. Keys are checked against the QP's protection domain. Data is copied
 * between the registered buffers; 64-bit atomics are little-endian (x86).</li>
 * <li>RC send queue: executed in order, one request at a time; a receiver-not-ready or an unanswered request
 * stalls the queue until retried (RNR: after the receiving QP's min_rnr_timer, which is code 0 once
 * connected as rdma_cm leaves it, standing for 655 ms and taken as {@code rnrDelay}, default 1 ms, until
 * ibv_modify_qp sets another code, then the IBA table's value; {@code rnr_retry_count} times, 7 = for ever; transport: {@code ackTimeout}, default 2 ms, {@code retry_count} times). A QP whose peer is in
 * ERR, destroyed or "dead" does not answer: RETRY_EXC_ERR.</li>
 * <li>Errors (as rxe reports them): local key/range/access - LOC_PROT_ERR; remote key/range/access -
 * REM_ACCESS_ERR (responder to ERR too); misaligned atomic - REM_INV_REQ_ERR (responder to ERR); atomic
 * whose local SGE is not 8 bytes - LOC_LEN_ERR; message longer than the receive - LOC_LEN_ERR at the
 * receiver and REM_INV_REQ_ERR at the sender (both to ERR); receive buffer key/range/access -
 * LOC_PROT_ERR at the receiver, REM_OP_ERR at the sender. The failing request completes first, then
 * everything else of the failing QP flushes (send queue, then receive queue, each in order).</li>
 * <li>RNR exhaustion moves only the sender to ERR: the receiver's QP is untouched, like hardware (it learns
 * through rdma_cm when the sender disconnects, or gets RETRY_EXC_ERR when it sends to the ERR QP).</li>
 * <li>Posts: EINVAL for an unsupported opcode, more than one SGE, INLINE above the granted maximum (min(asked,
 * 256)) or with READ/atomics, inline data outside every live registration; ENOMEM beyond the queue depth
 * (requests posted and not completed). Posting in ERR is accepted and flushes; posting to a destroyed QP is
 * refused (EINVAL). Unsignaled successful sends give no completion.</li>
 * <li>Zero-length RDMA WRITE/READ check no remote key (IB spec).</li>
 * <li>Completion queue overflow: counted, raises CQ_ERR, and the completion is kept (never dropped).</li>
 * <li>Shared receive queues as rxe has them ({@link io.reactiverdma.reactive.impl.loopback.LoopbackSharedReceiveQueue});
 * a QP on an SRQ raises QP_LAST_WQE_REACHED when it enters ERR. Destroying a QP leaves its unpolled
 * completions in the CQ, as rxe does; with {@code cleanCqOnDestroy} it removes them, as the mlx4/mlx5
 * providers do (their SRQ receives then vanish without a completion: hardware only, rxe does not clean).</li>
 * <li>rdma_cm: REQ private data padded to 56 bytes, REP to 196, REJ to 148; no listener: REJECTED status 8;
 * rdma_reject and destroying an unanswered request: REJECTED status 28. Both QPs go to RTS at rdma_accept;
 * the ESTABLISHED events follow. Destroying a connected id disconnects (the peer gets DISCONNECTED, the
 * destroyed id nothing); rdma_disconnect after the peer's is harmless; before a connection it moves the QP
 * to ERR and fails with EINVAL. rdma_accept after the client gave up fails with EINVAL. The listen backlog
 * is not enforced. Failed calls throw {@link io.reactiverdma.natives.NativeCallException} naming the call.</li>
 * <li>Zero-cost mode ({@link io.reactiverdma.reactive.impl.loopback.LoopbackStack#zeroCost()}, for measuring
 * the engine's own CPU): RC work requests execute inside the post on the posting thread, completions go into
 * preallocated CQ rings, no lock, no wire thread, no allocation per request; both connection ends must be
 * polled by the posting thread. What it leaves out (RNR and transport retries, queue depth, posting before
 * RTS, SRQs, faults on posts and polls): {@link io.reactiverdma.reactive.impl.loopback.LoopbackStack.Builder#zeroCost}.</li>
 * <li>A hung device ({@link io.reactiverdma.reactive.impl.loopback.LoopbackFaults#hang}) executes and
 * flushes nothing on its QPs and holds completions others generate for its CQs, until resumed.</li>
 * </ul>
 */
package io.reactiverdma.reactive.impl.loopback;
