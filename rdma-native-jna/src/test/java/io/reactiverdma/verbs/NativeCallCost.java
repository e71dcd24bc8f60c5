package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import io.reactiverdma.natives.RdmaNative;

import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * Mean cost of one call into native code through the mechanisms the verbs bindings use, after warm-up.
 * (a) and (b) are measured per mechanism: FFM downcalls (JDK 22+, the default there), libffi directly
 * ({@code Native.ffi_call} with per-object argument frames, the default on JDK 17-21) and JNA
 * {@link Function#invokeInt} with a reused argument array (the last fallback).
 * <ol>
 *   <li>{@code ibv_post_send} through the provider's cached {@code ops.post_send} function pointer
 *       ({@link QueuePair#postSend}): an 8-byte RDMA WRITE on a loopback RC QP pair, 63 unsignaled and 1
 *       signaled per batch of 64; only the post calls are timed, not the wait for the signaled completion.
 *       It includes the provider's own work: rxe copies the WQE into the shared queue and rings the kernel
 *       with a system call on every post;</li>
 *   <li>{@code ibv_poll_cq} of an empty CQ through the cached {@code ops.poll_cq} pointer
 *       ({@link CompletionQueue#poll}): provider work is a read of the shared queue's indexes, no syscall;</li>
 *   <li>the same two mechanisms on libc's {@code labs}, resolved as a function pointer: the bare cost of
 *       the call, without provider work;</li>
 *   <li>for comparison, libc's {@code labs} through JNA direct mapping (what {@link LibIbverbs} uses for
 *       the exported, non-data-path verbs).</li>
 * </ol>
 * (a) and (b) need an RDMA device (run in the VM: {@code scripts/rxe-vm -- java -cp ... NativeCallCost});
 * (c) and (d) run anywhere. Argument: seconds to measure each (default 3; warm-up is the same again).
 */
public final class NativeCallCost {
    private static double seconds = 3;

    private NativeCallCost() {
    }

    public static void main(String[] args) {
        if (args.length > 0) {
            seconds = Double.parseDouble(args[0]);
        }
        System.out.printf(Locale.ROOT, "NativeCallCost: java %s, %s, %d CPUs, %.1f s warm-up + %.1f s per measurement%n",
                System.getProperty("java.version"), System.getProperty("os.arch"),
                Runtime.getRuntime().availableProcessors(), seconds, seconds);
        System.out.println("data-path calls: " + Verbs.dataPathCalls());
        if (RdmaNative.isAvailable()) {
            deviceCalls();
        } else {
            System.out.println("(a)/(b) skipped: no RDMA device (" + RdmaNative.unavailabilityCause().getMessage() + ")");
        }
        libcCalls();
    }

    private static void deviceCalls() {
        for (Downcalls.Mechanism m : Downcalls.Mechanism.values()) {
            if (m == Downcalls.Mechanism.FFM && Downcalls.FFM == null) {
                System.out.println("(a)/(b) through FFM skipped: " + Downcalls.FFM_UNAVAILABLE);
                continue;
            }
            if (m == Downcalls.Mechanism.LIBFFI && !FfiCall.AVAILABLE) {
                continue;
            }
            Downcalls.inUse = m;
            deviceCalls(m.description);
        }
        Downcalls.inUse = Downcalls.chosen();
    }

    private static void deviceCalls(String how) {
        String name = System.getenv("RXE_DEVICE");
        try (VerbsContext ctx = VerbsDevice.open(name == null || name.isBlank() ? null : name);
             ProtectionDomain pd = ctx.allocPd();
             CompletionQueue cqA = ctx.createCompletionQueue(256, null, 0);
             CompletionQueue cqB = ctx.createCompletionQueue(256, null, 0)) {
            QueuePair a = pd.createQueuePair(QpInitAttributes.rc(cqA).maxSendWr(128).maxRecvWr(1));
            QueuePair b = pd.createQueuePair(QpInitAttributes.rc(cqB).maxSendWr(1).maxRecvWr(1));
            Rxe.connect(ctx, a, b);
            ByteBuffer src = ByteBuffer.allocateDirect(4096);
            ByteBuffer dst = ByteBuffer.allocateDirect(4096);
            MemoryRegion mrSrc = pd.registerMemory(src, AccessFlags.LOCAL_WRITE);
            MemoryRegion mrDst = pd.registerMemory(dst, AccessFlags.ALL_REMOTE);

            SendWorkRequests unsignaled = new SendWorkRequests(1, 1);
            int u = unsignaled.add(1, WrOpcode.RDMA_WRITE, 0);
            unsignaled.sge(u, mrSrc, 0, 8).rdma(u, mrDst.address(), mrDst.rkey());
            SendWorkRequests signaled = new SendWorkRequests(1, 1);
            int s = signaled.add(2, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
            signaled.sge(s, mrSrc, 0, 8).rdma(s, mrDst.address(), mrDst.rkey());
            WorkCompletions wcs = new WorkCompletions(16);

            PostResult warm = postSend(a, cqA, unsignaled, signaled, wcs, seconds);
            PostResult post = postSend(a, cqA, unsignaled, signaled, wcs, seconds);
            System.out.printf(Locale.ROOT, "(a) ibv_post_send via cached ops.post_send, %s (8 B RDMA WRITE, loopback RC, "
                    + "1 in 64 signaled): %.0f ns/call (%d calls; warm-up %d)%n", how, post.nsPerCall, post.calls, warm.calls);

            long warmPolls = pollEmpty(cqB, wcs, seconds)[1];
            long[] poll = pollEmpty(cqB, wcs, seconds);
            System.out.printf(Locale.ROOT, "(b) ibv_poll_cq of an empty CQ via cached ops.poll_cq, %s: %.0f ns/call "
                    + "(%d calls; warm-up %d)%n", how, (double) poll[0] / poll[1], poll[1], warmPolls);
        }
    }

    private record PostResult(double nsPerCall, long calls) {
    }

    private static PostResult postSend(QueuePair qp, CompletionQueue cq, SendWorkRequests unsignaled,
            SendWorkRequests signaled, WorkCompletions wcs, double secs) {
        long timed = 0;
        long calls = 0;
        long end = System.nanoTime() + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            for (int k = 0; k < 63; k++) {
                qp.postSend(unsignaled);
            }
            qp.postSend(signaled);
            timed += System.nanoTime() - t0;
            calls += 64;
            // The signaled completion also retires the 63 unsignaled WRs before it.
            long deadline = System.nanoTime() + 10_000_000_000L;
            int n;
            while ((n = cq.poll(wcs)) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no completion within 10 s");
                }
            }
            if (!wcs.isSuccess(0)) {
                throw new IllegalStateException(wcs.describe(0));
            }
        }
        return new PostResult((double) timed / calls, calls);
    }

    /** Returns {total ns, calls}. */
    private static long[] pollEmpty(CompletionQueue cq, WorkCompletions wcs, double secs) {
        long calls = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (secs * 1e9);
        long sink = 0;
        while (true) {
            for (int k = 0; k < 1000; k++) {
                sink += cq.poll(wcs);
            }
            calls += 1000;
            long now = System.nanoTime();
            if (now > end) {
                if (sink != 0) {
                    throw new IllegalStateException("the CQ was not empty");
                }
                return new long[] {now - t0, calls};
            }
        }
    }

    private static void libcCalls() {
        Function labs = NativeLibrary.getInstance("c").getFunction("labs");
        Object[] args = {Long.valueOf(-42)};
        measureFunction(labs, args, seconds); // warm-up
        long[] r = measureFunction(labs, args, seconds);
        System.out.printf(Locale.ROOT, "(c) libc labs via JNA Function.invokeInt on its function pointer (the "
                + "fallback of (a)/(b)): %.0f ns/call (%d calls)%n", (double) r[0] / r[1], r[1]);
        if (FfiCall.AVAILABLE) {
            measureFfi(seconds);
            r = measureFfi(seconds);
            System.out.printf(Locale.ROOT, "(c) libc labs via Native.ffi_call on its function pointer with an argument "
                    + "frame (the mechanism of (a)/(b)): %.0f ns/call (%d calls)%n", (double) r[0] / r[1], r[1]);
        }
        measureDirect(seconds);
        r = measureDirect(seconds);
        System.out.printf(Locale.ROOT, "(d) libc labs via JNA direct mapping (as LibIbverbs): %.0f ns/call (%d calls)%n",
                (double) r[0] / r[1], r[1]);
        if (Downcalls.FFM != null) {
            for (boolean critical : new boolean[] {false, true}) {
                measureFfm(critical, seconds);
                r = measureFfm(critical, seconds);
                System.out.printf(Locale.ROOT, "(e) libc memcmp(a, b, 0) via an FFM downcall%s on its function pointer "
                        + "(the mechanism of (a)/(b) on JDK 22+): %.1f ns/call (%d calls)%n",
                        critical ? " with Linker.Option.critical" : "", (double) r[0] / r[1], r[1]);
            }
        } else {
            System.out.println("(e) FFM skipped: " + Downcalls.FFM_UNAVAILABLE);
        }
    }

    private static long[] measureFfm(boolean critical, double secs) {
        ByteBuffer a = Buffers.allocate(8);
        long b = Buffers.address(Buffers.allocate(8));
        long memcmp = com.sun.jna.Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction("memcmp"));
        DataPathCall call = Downcalls.FFM.bind(DataPathCall.Signature.PTR_PTR_PTR, memcmp, Buffers.address(a), critical);
        long calls = 0;
        long sink = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (secs * 1e9);
        while (true) {
            for (int k = 0; k < 1000; k++) {
                sink += call.call(b, 0L);
            }
            calls += 1000;
            long now = System.nanoTime();
            if (now > end) {
                java.lang.ref.Reference.reachabilityFence(a);
                if (sink != 0) {
                    throw new IllegalStateException("memcmp of 0 bytes returned " + sink);
                }
                return new long[] {now - t0, calls};
            }
        }
    }

    private static long[] measureFunction(Function f, Object[] args, double secs) {
        long calls = 0;
        long sink = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (secs * 1e9);
        while (true) {
            for (int k = 0; k < 1000; k++) {
                sink += f.invokeInt(args);
            }
            calls += 1000;
            long now = System.nanoTime();
            if (now > end) {
                if (sink != 42L * calls) {
                    throw new IllegalStateException("labs returned garbage");
                }
                return new long[] {now - t0, calls};
            }
        }
    }

    private static long[] measureFfi(double secs) {
        long fn = com.sun.jna.Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction("labs"));
        ByteBuffer types = ByteBuffer.allocateDirect(64).order(java.nio.ByteOrder.nativeOrder());
        long t = Buffers.address(types);
        types.putLong(0, 8).putShort(8, (short) 8).putShort(10, (short) 12).putLong(16, 0); // ffi_type sint64
        types.putLong(32, t);
        long cif = Native.ffi_prep_cif(0, 1, t, t + 32);
        FfiCall.Frame frame = new FfiCall.Frame(1);
        frame.putLong(0, -42L);
        long calls = 0;
        long sink = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (secs * 1e9);
        while (true) {
            for (int k = 0; k < 1000; k++) {
                sink += frame.callInt(cif, fn);
            }
            calls += 1000;
            long now = System.nanoTime();
            if (now > end) {
                java.lang.ref.Reference.reachabilityFence(types);
                if (sink != 42L * calls) {
                    throw new IllegalStateException("labs returned garbage");
                }
                return new long[] {now - t0, calls};
            }
        }
    }

    private static long[] measureDirect(double secs) {
        long calls = 0;
        long sink = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (secs * 1e9);
        while (true) {
            for (int k = 0; k < 1000; k++) {
                sink += Direct.labs(-42);
            }
            calls += 1000;
            long now = System.nanoTime();
            if (now > end) {
                if (sink != 42L * calls) {
                    throw new IllegalStateException("labs returned garbage");
                }
                return new long[] {now - t0, calls};
            }
        }
    }

    private static final class Direct {
        static {
            Native.register(Direct.class, "c");
        }

        static native long labs(long v);
    }
}
