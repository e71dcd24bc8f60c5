package io.reactiverdma.natives;

import com.sun.jna.NativeLibrary;

/**
 * The one place that loads rdma-core's user-space libraries, and the answer to "can RDMA be used here?".
 *
 * <p>{@link #isAvailable()} is true only when libibverbs and librdmacm load, at least one RDMA device is
 * present, and at least one of its ports is ACTIVE. {@link #unavailabilityCause()} says which of these
 * failed; {@link #ensureAvailability()} throws it.
 *
 * <p>Library loading is separate from the device check: {@link #libibverbs()} / {@link #librdmacm()} only
 * need the libraries, so the bindings work (and give typed errors) on a machine with the libraries and no
 * device.
 */
public final class RdmaNative {
    /** Soname of libibverbs as rdma-core installs it (the unversioned .so exists only with -dev). */
    public static final String LIBIBVERBS = "ibverbs";
    public static final String LIBRDMACM = "rdmacm";

    private RdmaNative() {
    }

    private static final class Libraries {
        static final NativeLibrary IBVERBS;
        static final NativeLibrary RDMACM;
        static final Throwable CAUSE;

        static {
            NativeLibrary verbs = null;
            NativeLibrary cm = null;
            Throwable cause = null;
            String platform = platformProblem(System.getProperty("os.name"), System.getProperty("os.arch"));
            try {
                if (platform != null) {
                    throw new RdmaUnavailableException(platform);
                }
                verbs = load(LIBIBVERBS, "libibverbs.so.1", "rdma-core's libibverbs (Debian package libibverbs1)");
                cm = load(LIBRDMACM, "librdmacm.so.1", "rdma-core's librdmacm (Debian package librdmacm1)");
            } catch (Throwable t) {
                cause = t;
            }
            IBVERBS = verbs;
            RDMACM = cm;
            CAUSE = cause;
        }

        private static NativeLibrary load(String name, String soname, String what) {
            try {
                return NativeLibrary.getInstance(soname);
            } catch (UnsatisfiedLinkError first) {
                try {
                    return NativeLibrary.getInstance(name);
                } catch (UnsatisfiedLinkError second) {
                    second.addSuppressed(first);
                    throw new RdmaUnavailableException("cannot load " + soname + ": " + what
                            + " is not installed or not on the library path", second);
                }
            }
        }
    }

    private static final class Probe {
        static final Throwable CAUSE = probe();

        private static Throwable probe() {
            if (Libraries.CAUSE != null) {
                return Libraries.CAUSE;
            }
            try {
                return DeviceProbe.findActivePort();
            } catch (Throwable t) {
                return new RdmaUnavailableException("probing RDMA devices failed: " + t, t);
            }
        }
    }

    /**
     * Why the binding must not run on this OS and architecture, or null when it may: its struct offsets and
     * constants are those of x86-64 Linux (checked against rdma-core's headers on the build machine by
     * StructLayoutTest and NativeConstantsTest). On another architecture they differ (on aarch64
     * {@code pthread_mutex_t} is 48 bytes, which moves {@code ibv_context.abi_compat}), and using them would
     * read and write the wrong memory; so the libraries are not even loaded.
     */
    static String platformProblem(String osName, String osArch) {
        boolean linux = osName != null && osName.toLowerCase(java.util.Locale.ROOT).startsWith("linux");
        boolean x8664 = "amd64".equals(osArch) || "x86_64".equals(osArch);
        if (linux && x8664) {
            return null;
        }
        return "this RDMA binding is built for x86-64 Linux (its struct layouts and constants are checked against "
                + "rdma-core's headers there); this JVM runs on " + osName + "/" + osArch;
    }

    /** libibverbs, loaded once. Throws {@link RdmaUnavailableException} if it cannot be loaded. */
    public static NativeLibrary libibverbs() {
        ensureLibraries();
        return Libraries.IBVERBS;
    }

    /** librdmacm, loaded once. Throws {@link RdmaUnavailableException} if it cannot be loaded. */
    public static NativeLibrary librdmacm() {
        ensureLibraries();
        return Libraries.RDMACM;
    }

    /** True when both libraries load (a device may still be missing). */
    public static boolean areLibrariesAvailable() {
        return Libraries.CAUSE == null;
    }

    /** Throws the reason the libraries could not be loaded, if any. */
    public static void ensureLibraries() {
        if (Libraries.CAUSE != null) {
            throw asUnavailable(Libraries.CAUSE);
        }
    }

    /** True when the libraries load and some RDMA device has an ACTIVE port. Probed once per JVM. */
    public static boolean isAvailable() {
        return Probe.CAUSE == null;
    }

    /** Throws {@link #unavailabilityCause()} if RDMA cannot be used. */
    public static void ensureAvailability() {
        if (Probe.CAUSE != null) {
            throw asUnavailable(Probe.CAUSE);
        }
    }

    /**
     * Why RDMA cannot be used, or {@code null} if it can: library missing, no device, or no ACTIVE port
     * (the message names the device and port states it found).
     */
    public static Throwable unavailabilityCause() {
        return Probe.CAUSE;
    }

    private static RdmaUnavailableException asUnavailable(Throwable t) {
        return t instanceof RdmaUnavailableException e ? e : new RdmaUnavailableException(t.toString(), t);
    }
}
