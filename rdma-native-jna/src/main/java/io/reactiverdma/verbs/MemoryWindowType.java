package io.reactiverdma.verbs;

/** {@code enum ibv_mw_type}. Type 1 is bound with {@link MemoryWindow#bind}, type 2 with a BIND_MW work request. */
public enum MemoryWindowType {
    TYPE_1(1),
    TYPE_2(2);

    private final int value;

    MemoryWindowType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public static MemoryWindowType of(int value) {
        return value == 1 ? TYPE_1 : value == 2 ? TYPE_2 : null;
    }
}
