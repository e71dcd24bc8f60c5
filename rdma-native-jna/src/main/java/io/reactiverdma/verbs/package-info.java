/**
 * Plain Java bindings to libibverbs (rdma-core), through JNA.
 *
 * <h2>Objects and their lifecycles</h2>
 * {@link io.reactiverdma.verbs.VerbsDevice#list()} / {@link io.reactiverdma.verbs.VerbsDevice#open(String)} give a
 * {@link io.reactiverdma.verbs.VerbsContext}; from it come {@link io.reactiverdma.verbs.ProtectionDomain}s,
 * {@link io.reactiverdma.verbs.CompletionChannel}s and {@link io.reactiverdma.verbs.CompletionQueue}s; a PD
 * registers {@link io.reactiverdma.verbs.MemoryRegion}s and creates {@link io.reactiverdma.verbs.QueuePair}s,
 * {@link io.reactiverdma.verbs.SharedReceiveQueue}s, {@link io.reactiverdma.verbs.AddressHandle}s and
 * {@link io.reactiverdma.verbs.MemoryWindow}s. Every one is an {@link io.reactiverdma.natives.NativeResource}:
 * closing is idempotent, use after close throws {@link io.reactiverdma.natives.ClosedResourceException}
 * before any native call, and closing a parent closes its children first, in an order libibverbs accepts
 * (QPs before the CQs, SRQs they use; CQs before their channel; memory windows before the MR they are bound
 * to). {@link io.reactiverdma.verbs.VerbsContext#borrow} and {@link io.reactiverdma.verbs.QueuePair#adopt}
 * wrap objects librdmacm owns.
 *
 * <h2>Failures</h2>
 * A failed verb throws {@link io.reactiverdma.natives.NativeCallException} naming the C function, the errno and
 * its strerror text (and, for ENOMEM from ibv_reg_mr, the locked-memory limit). Bad arguments are refused in
 * Java first ({@link java.lang.IllegalArgumentException} / {@link java.lang.NullPointerException} naming the
 * parameter). Values that make a QP hang forever (rnr_retry 7, timeout 0) are refused.
 *
 * <h2>The data path</h2>
 * {@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_poll_cq} and
 * {@code ibv_req_notify_cq} are static inlines in verbs.h; they are called through the provider's function
 * pointers in {@code ibv_context->ops}, cached per context as JNA {@link com.sun.jna.Function}s, with one
 * reused argument array per QP/CQ. Work requests and completions are flyweights over direct, native-order
 * buffers with explicit offsets ({@link io.reactiverdma.verbs.SendWorkRequests},
 * {@link io.reactiverdma.verbs.ReceiveWorkRequests}, {@link io.reactiverdma.verbs.WorkCompletions}): posting
 * and polling allocate nothing per work request or completion. Every {@code @NativeStruct} layout is checked
 * against the installed headers by {@code StructLayoutTest}.
 */
package io.reactiverdma.verbs;
