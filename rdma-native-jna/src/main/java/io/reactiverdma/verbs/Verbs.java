package io.reactiverdma.verbs;

import com.sun.jna.Function;
import io.reactiverdma.natives.RdmaNative;

/**
 * Process-wide libibverbs functions: fork safety and the status/event/state strings. Each throws
 * {@link io.reactiverdma.natives.RdmaUnavailableException} when libibverbs is not installed.
 */
public final class Verbs {
    private Verbs() {
    }

    /** {@code enum ibv_fork_status}. */
    public enum ForkStatus {
        DISABLED, ENABLED, UNNEEDED, UNKNOWN
    }

    /**
     * {@code ibv_fork_init()}: makes registered memory safe across {@code fork()} (madvise DONTFORK on every
     * registration). Must be called before any memory is registered; costs a little per registration. Not
     * needed on kernels that copy DMA-pinned pages on fork (Linux 5.13+): {@link #forkStatus()} then says
     * UNNEEDED and this returns without error even when called late (rdma-core v44 would refuse a late call
     * with EINVAL although there is nothing to do). The environment variable RDMAV_FORK_SAFE=1 does the same
     * as calling it first thing.
     *
     * @throws io.reactiverdma.natives.NativeCallException when libibverbs refuses: EINVAL when memory was already
     *                                                     registered without it (too late)
     */
    public static void forkInit() {
        RdmaNative.ensureLibraries();
        int rc = LibIbverbs.ibv_fork_init();
        if (rc == 0) {
            return;
        }
        if (rc == io.reactiverdma.natives.Errno.EINVAL && forkStatus() == ForkStatus.UNNEEDED) {
            return;
        }
        throw Failures.returned("ibv_fork_init", rc, rc == io.reactiverdma.natives.Errno.EINVAL
                ? "called after memory was registered: call Verbs.forkInit() before opening any device, or set "
                + "RDMAV_FORK_SAFE=1 in the environment" : null);
    }

    /** {@code ibv_is_fork_initialized()} (rdma-core 35+); UNKNOWN when this libibverbs lacks it. */
    public static ForkStatus forkStatus() {
        RdmaNative.ensureLibraries();
        Function f = LibIbverbs.optional("ibv_is_fork_initialized");
        if (f == null) {
            return ForkStatus.UNKNOWN;
        }
        int v = f.invokeInt(new Object[0]);
        return v >= 0 && v <= 2 ? ForkStatus.values()[v] : ForkStatus.UNKNOWN;
    }

    /** {@code ibv_wc_status_str}: "success", "remote access error" ... */
    public static String wcStatusStr(int status) {
        RdmaNative.ensureLibraries();
        return LibIbverbs.ibv_wc_status_str(status);
    }

    /** {@code ibv_event_type_str}: "local work queue catastrophic error", "SRQ limit reached" ... */
    public static String eventTypeStr(int eventType) {
        RdmaNative.ensureLibraries();
        return LibIbverbs.ibv_event_type_str(eventType);
    }

    /** {@code ibv_port_state_str}: "active", "down", "init" ... */
    public static String portStateStr(int portState) {
        RdmaNative.ensureLibraries();
        return LibIbverbs.ibv_port_state_str(portState);
    }

    /** {@code ibv_node_type_str}: "InfiniBand channel adapter" ... */
    public static String nodeTypeStr(int nodeType) {
        RdmaNative.ensureLibraries();
        return LibIbverbs.ibv_node_type_str(nodeType);
    }

    /**
     * How post_send / post_recv / post_srq_recv / poll_cq / req_notify_cq reach the provider: starts with
     * "FFM downcalls" on JDK 22+ with native access enabled, else "libffi" (with the reason FFM is not used),
     * or "JNA Function.invokeInt" when neither works. System property {@code io.reactiverdma.verbs.downcalls}
     * ({@code ffm}, {@code libffi} or {@code jna}) forces one; a forced one this JVM cannot use makes
     * {@link VerbsDevice#open} fail with an {@link IllegalStateException} that says why.
     */
    public static String dataPathCalls() {
        return Downcalls.describe();
    }

    /** {@code ibv_inc_rkey}: the rkey with its low 8 bits (the key tag) incremented, for binding MWs. */
    public static int incRkey(int rkey) {
        return (rkey & ~0xff) | ((rkey + 1) & 0xff);
    }
}
