package io.reactiverdma.verbs;

/**
 * A {@link DataPathCall} through libffi ({@link FfiCall}): the arguments go into a per-call native frame,
 * then one {@code Native.ffi_call}. Not thread-safe (the frame is shared): callers guard it.
 */
final class LibffiCall extends DataPathCall {
    static final Binder BINDER = (signature, function, self, critical) -> new LibffiCall(signature, function, self);

    private final FfiCall.Frame frame;
    private final long cif;
    private final long function;

    private LibffiCall(Signature signature, long function, long self) {
        super(signature);
        this.frame = new FfiCall.Frame(signature == Signature.PTR_INT ? 2 : 3);
        this.cif = FfiCall.cif(signature);
        this.function = function;
        frame.putLong(0, self);
    }

    @Override
    int call(long a, long b) {
        if (signature != Signature.PTR_PTR_PTR) {
            return super.call(a, b);
        }
        frame.putLong(1, a);
        frame.putLong(2, b);
        return frame.callInt(cif, function);
    }

    @Override
    int call(int n, long p) {
        if (signature != Signature.PTR_INT_PTR) {
            return super.call(n, p);
        }
        frame.putInt(1, n);
        frame.putLong(2, p);
        return frame.callInt(cif, function);
    }

    @Override
    int call(int n) {
        if (signature != Signature.PTR_INT) {
            return super.call(n);
        }
        frame.putInt(1, n);
        return frame.callInt(cif, function);
    }
}
