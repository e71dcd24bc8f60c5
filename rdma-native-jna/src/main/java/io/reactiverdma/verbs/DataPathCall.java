package io.reactiverdma.verbs;

/**
 * One provider data-path function ({@code ops.post_send}, {@code post_recv}, {@code post_srq_recv},
 * {@code poll_cq}, {@code req_notify_cq}) bound to its function pointer and to its first argument, the QP,
 * SRQ or CQ it works on. Made by the calling mechanism in use ({@link Downcalls}): FFM downcalls on JDK
 * 22+ ({@code FfmCall}, in the jar's {@code META-INF/versions/22}) or libffi ({@link LibffiCall}). A call
 * returns what the provider returned; an instance answers only the method of its {@link Signature}.
 * Whether it is thread-safe depends on the mechanism (libffi's argument frame is not): callers guard it.
 */
abstract class DataPathCall {
    /** Argument shapes of the data-path functions; pointers travel as 64-bit integers. */
    enum Signature {
        /** int f(void *self, void *, void *): post_send, post_recv, post_srq_recv. */
        PTR_PTR_PTR,
        /** int f(void *self, int, void *): poll_cq. */
        PTR_INT_PTR,
        /** int f(void *self, int): req_notify_cq. */
        PTR_INT
    }

    /** Makes calls of one mechanism. */
    interface Binder {
        /**
         * Binds {@code function} (an address) with {@code self} as its first argument. {@code critical}
         * (FFM only; benchmarks) makes a call that stays in Java's thread state: legal only for short
         * functions that never call back into Java.
         */
        DataPathCall bind(Signature signature, long function, long self, boolean critical);
    }

    final Signature signature;

    DataPathCall(Signature signature) {
        this.signature = signature;
    }

    /** {@link Signature#PTR_PTR_PTR}: {@code f(self, a, b)}. */
    int call(long a, long b) {
        throw wrongShape(Signature.PTR_PTR_PTR);
    }

    /** {@link Signature#PTR_INT_PTR}: {@code f(self, n, p)}. */
    int call(int n, long p) {
        throw wrongShape(Signature.PTR_INT_PTR);
    }

    /** {@link Signature#PTR_INT}: {@code f(self, n)}. */
    int call(int n) {
        throw wrongShape(Signature.PTR_INT);
    }

    private IllegalStateException wrongShape(Signature called) {
        return new IllegalStateException("a " + signature + " call called as " + called);
    }
}
