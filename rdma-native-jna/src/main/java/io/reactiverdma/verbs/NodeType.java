package io.reactiverdma.verbs;

/** {@code enum ibv_node_type}. Soft-RoCE reports {@link #CA}. */
public enum NodeType {
    UNKNOWN(-1),
    CA(1),
    SWITCH(2),
    ROUTER(3),
    RNIC(4),
    USNIC(5),
    USNIC_UDP(6),
    UNSPECIFIED(7);

    private final int value;

    NodeType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public static NodeType of(int value) {
        for (NodeType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
