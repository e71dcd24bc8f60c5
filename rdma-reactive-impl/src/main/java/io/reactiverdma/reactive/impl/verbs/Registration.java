package io.reactiverdma.reactive.impl.verbs;

/** One memory registration ({@code ibv_mr}): the address work requests name it by, and its keys. */
public interface Registration {
    long address();

    int lkey();

    int rkey();

    /** {@code ibv_dereg_mr}; idempotent. */
    void deregister();
}
