package io.reactiverdma.reactive.impl.connection;

/**
 * Values by QP number, without boxing (a lookup per completion allocates nothing): open addressing with
 * linear probing and backward-shift deletion. Not thread-safe: one thread owns it (an SRQ's poller).
 */
final class QueuePairTable<T> {
    private int[] keys = new int[64];
    private Object[] values = new Object[64];
    private int size;

    private static int slot(int key, int mask) {
        return (key * 0x9E3779B9) >>> 7 & mask;
    }

    @SuppressWarnings("unchecked")
    T get(int qpNum) {
        int mask = keys.length - 1;
        for (int i = slot(qpNum, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == qpNum) {
                return (T) values[i];
            }
        }
        return null;
    }

    /** Maps {@code qpNum} to {@code value}, replacing what it mapped to. */
    void put(int qpNum, T value) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = slot(qpNum, mask);
        while (values[i] != null && keys[i] != qpNum) {
            i = (i + 1) & mask;
        }
        if (values[i] == null) {
            size++;
        }
        keys[i] = qpNum;
        values[i] = value;
    }

    /** Removes {@code qpNum} if it maps to {@code value} (a reused QP number may map to a newer one). */
    void remove(int qpNum, T value) {
        int mask = keys.length - 1;
        int i = slot(qpNum, mask);
        while (values[i] != null && keys[i] != qpNum) {
            i = (i + 1) & mask;
        }
        if (values[i] != value || value == null) {
            return;
        }
        values[i] = null;
        size--;
        // Shift back the entries after it whose probe sequence passed through the freed slot.
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            if (((j - home) & mask) >= ((j - i) & mask)) {
                keys[i] = keys[j];
                values[i] = values[j];
                values[j] = null;
                i = j;
            }
        }
    }

    /** Every value (for close paths; the order is the table's). */
    @SuppressWarnings("unchecked")
    void forEach(java.util.function.Consumer<T> action) {
        for (Object v : values) {
            if (v != null) {
                action.accept((T) v);
            }
        }
    }

    int size() {
        return size;
    }

    @SuppressWarnings("unchecked")
    private void grow() {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        values = new Object[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                put(oldKeys[i], (T) oldValues[i]);
            }
        }
    }
}
