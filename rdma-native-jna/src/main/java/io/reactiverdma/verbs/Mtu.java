package io.reactiverdma.verbs;

/** {@code enum ibv_mtu}: path MTU of a connected QP, at most the port's active MTU. */
public enum Mtu {
    MTU_256(1, 256),
    MTU_512(2, 512),
    MTU_1024(3, 1024),
    MTU_2048(4, 2048),
    MTU_4096(5, 4096);

    private final int value;
    private final int bytes;

    Mtu(int value, int bytes) {
        this.value = value;
        this.bytes = bytes;
    }

    public int value() {
        return value;
    }

    /** The MTU in bytes. */
    public int bytes() {
        return bytes;
    }

    /** The constant for a C value, or null for 0 / unknown values. */
    public static Mtu of(int value) {
        return value >= 1 && value <= 5 ? values()[value - 1] : null;
    }
}
