package io.reactiverdma.verbs;

import java.lang.reflect.InvocationTargetException;
import java.util.Locale;

/**
 * Chooses how the data-path functions reach the provider, once per JVM:
 * <ul>
 *   <li>{@link Mechanism#FFM}: {@code java.lang.foreign} downcalls (2-10 ns a call), when the JVM is 22 or
 *       later, the jar has its {@code META-INF/versions/22} classes and native access is enabled for the
 *       module that holds them ({@code --enable-native-access=ALL-UNNAMED} on the class path);</li>
 *   <li>{@link Mechanism#LIBFFI}: JNA's {@code Native.ffi_call} with a prepared call interface (about 90 ns),
 *       otherwise;</li>
 *   <li>{@link Mechanism#JNA}: cached JNA {@code Function}s, when neither works.</li>
 * </ul>
 * System property {@value #PROPERTY} ({@code ffm}, {@code libffi} or {@code jna}) forces one; a forced
 * mechanism this JVM cannot use fails the first {@link VerbsDevice#open} / {@link VerbsContext#borrow} with
 * an {@link IllegalStateException} that says why, before a device is opened. The FFM classes are loaded by
 * name only on JDK 22+, so JDK 17 never sees them.
 */
final class Downcalls {
    static final String PROPERTY = "io.reactiverdma.verbs.downcalls";
    private static final String FFM_CLASS = "io.reactiverdma.verbs.FfmCall";

    enum Mechanism {
        FFM("FFM downcalls (java.lang.foreign)"),
        LIBFFI("libffi (Native.ffi_call, per-object argument frames)"),
        JNA("JNA Function.invokeInt");

        final String description;

        Mechanism(String description) {
            this.description = description;
        }
    }

    /** The FFM binder, or null; then {@link #FFM_UNAVAILABLE} says why. */
    static final DataPathCall.Binder FFM;
    static final String FFM_UNAVAILABLE;
    /** Why the forced mechanism cannot be used, or null. */
    private static final String FAILURE;
    private static final Mechanism CHOSEN;
    /** What new QPs, CQs and SRQs use: {@link #CHOSEN}; tests and benchmarks switch it to compare. */
    static volatile Mechanism inUse;

    static {
        DataPathCall.Binder ffm = null;
        String why;
        int feature = Runtime.version().feature();
        if (feature < 22) {
            why = "FFM downcalls need JDK 22 or later; this JVM is " + feature;
        } else {
            try {
                ffm = (DataPathCall.Binder) Class.forName(FFM_CLASS).getDeclaredMethod("binder").invoke(null);
                why = null;
            } catch (ClassNotFoundException e) {
                why = "this rdma-native-jna has no FFM classes (built on a JDK older than 22, or loaded from a "
                        + "class directory without its META-INF/versions/22)";
            } catch (InvocationTargetException e) {
                why = String.valueOf(e.getCause().getMessage());
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                why = "FFM downcalls could not be set up: " + e;
            }
        }
        FFM = ffm;
        FFM_UNAVAILABLE = why;
        String forced = System.getProperty(PROPERTY);
        Mechanism chosen;
        String failure = null;
        try {
            chosen = choose(forced, FFM_UNAVAILABLE, FfiCall.AVAILABLE ? null : String.valueOf(FfiCall.UNAVAILABLE_CAUSE));
        } catch (IllegalStateException e) {
            failure = e.getMessage();
            chosen = FfiCall.AVAILABLE ? Mechanism.LIBFFI : Mechanism.JNA;
        }
        FAILURE = failure;
        CHOSEN = chosen;
        inUse = chosen;
    }

    private Downcalls() {
    }

    /**
     * The mechanism for a {@value #PROPERTY} value (null: not set) given why FFM and libffi are unavailable
     * (null: available).
     *
     * @throws IllegalStateException when the value is not a mechanism, or names one that is unavailable
     */
    static Mechanism choose(String forced, String ffmUnavailable, String libffiUnavailable) {
        if (forced == null || forced.isBlank()) {
            return ffmUnavailable == null ? Mechanism.FFM : libffiUnavailable == null ? Mechanism.LIBFFI : Mechanism.JNA;
        }
        Mechanism m;
        try {
            m = Mechanism.valueOf(forced.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("-D" + PROPERTY + "=" + forced + " is not a calling mechanism: use ffm, "
                    + "libffi or jna (or leave it unset to choose the fastest available)");
        }
        String unavailable = m == Mechanism.FFM ? ffmUnavailable : m == Mechanism.LIBFFI ? libffiUnavailable : null;
        if (unavailable != null) {
            throw new IllegalStateException("-D" + PROPERTY + "=" + forced + " forces " + m.description
                    + ", which this JVM cannot use: " + unavailable);
        }
        return m;
    }

    /** Throws when a forced mechanism is unavailable; called before a device is opened or wrapped. */
    static void requireUsable() {
        if (FAILURE != null) {
            throw new IllegalStateException(FAILURE);
        }
    }

    /** The mechanism chosen at start (the property, or the fastest available). */
    static Mechanism chosen() {
        return CHOSEN;
    }

    /** A call of the mechanism in use, or null for {@link Mechanism#JNA} (the caller's Function path). */
    static DataPathCall bind(DataPathCall.Signature signature, long function, long self) {
        return bind(inUse, signature, function, self);
    }

    static DataPathCall bind(Mechanism m, DataPathCall.Signature signature, long function, long self) {
        switch (m) {
            case FFM:
                if (FFM == null) {
                    throw new IllegalStateException("FFM downcalls unavailable: " + FFM_UNAVAILABLE);
                }
                return FFM.bind(signature, function, self, false);
            case LIBFFI:
                if (!FfiCall.AVAILABLE) {
                    throw new IllegalStateException("libffi calls unavailable", FfiCall.UNAVAILABLE_CAUSE);
                }
                return LibffiCall.BINDER.bind(signature, function, self, false);
            default:
                return null;
        }
    }

    /** For {@link Verbs#dataPathCalls()}: the mechanism in use and, when it is not FFM, why. */
    static String describe() {
        Mechanism m = inUse;
        if (m == Mechanism.FFM) {
            return m.description;
        }
        String forced = System.getProperty(PROPERTY);
        return m.description + " (" + (FAILURE != null ? FAILURE
                : forced != null && !forced.isBlank() ? "forced by -D" + PROPERTY + "=" + forced
                : "FFM unavailable: " + FFM_UNAVAILABLE) + ")";
    }
}
