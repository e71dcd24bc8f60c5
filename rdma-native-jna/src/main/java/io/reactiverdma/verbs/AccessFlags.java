package io.reactiverdma.verbs;

import java.util.StringJoiner;

/**
 * {@code enum ibv_access_flags}: bits for {@link ProtectionDomain#registerMemory} and
 * {@link QpAttributes#accessFlags(int)}. Remote write and remote atomic require local write (verbs rule,
 * checked before the call).
 */
public final class AccessFlags {
    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 1 << 1;
    public static final int REMOTE_READ = 1 << 2;
    public static final int REMOTE_ATOMIC = 1 << 3;
    public static final int MW_BIND = 1 << 4;
    public static final int ZERO_BASED = 1 << 5;
    public static final int ON_DEMAND = 1 << 6;
    public static final int HUGETLB = 1 << 7;
    /** First of the optional flags ({@code IBV_ACCESS_OPTIONAL_FIRST}): ignored by kernels that lack it. */
    public static final int RELAXED_ORDERING = 1 << 20;
    /** {@code IBV_ACCESS_OPTIONAL_RANGE}: registering with any of these goes through ibv_reg_mr_iova2. */
    public static final int OPTIONAL_RANGE = ((1 << 29) << 1) - 1 & ~((1 << 20) - 1);

    /** Local write, remote read, remote write and remote atomic: everything an RDMA peer may do. */
    public static final int ALL_REMOTE = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private AccessFlags() {
    }

    /** Throws IllegalArgumentException when remote write/atomic is asked for without local write. */
    static void validate(String parameter, int flags) {
        if ((flags & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (flags & LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException(parameter + " " + describe(flags)
                    + ": REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE (the HCA writes into the memory)");
        }
    }

    /** For messages: "LOCAL_WRITE|REMOTE_READ". */
    public static String describe(int flags) {
        StringJoiner j = new StringJoiner("|");
        String[] names = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC", "MW_BIND", "ZERO_BASED",
            "ON_DEMAND", "HUGETLB"};
        for (int i = 0; i < names.length; i++) {
            if ((flags & (1 << i)) != 0) {
                j.add(names[i]);
            }
        }
        if ((flags & RELAXED_ORDERING) != 0) {
            j.add("RELAXED_ORDERING");
        }
        int rest = flags & ~0xff & ~RELAXED_ORDERING;
        if (rest != 0) {
            j.add("0x" + Integer.toHexString(rest));
        }
        return flags == 0 ? "0" : j.toString();
    }
}
