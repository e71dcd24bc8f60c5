package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeResource;

/** An address handle ({@code struct ibv_ah}): the destination of UD sends ({@link SendWorkRequests#ud}). */
public final class AddressHandle extends NativeResource {
    private final long address;
    private final AddressHandleAttributes attributes;

    AddressHandle(ProtectionDomain pd, long address, AddressHandleAttributes attributes) {
        super("ibv_ah on " + pd.context().deviceName(), pd);
        this.address = address;
        this.attributes = attributes;
    }

    /** The {@code struct ibv_ah *}. */
    public long address() {
        return address;
    }

    /** What it was created from (a copy), or null when created from a work completion. */
    public AddressHandleAttributes attributes() {
        return attributes == null ? null : attributes.copy();
    }

    @Override
    protected void release() {
        Failures.check("ibv_destroy_ah", LibIbverbs.ibv_destroy_ah(address));
    }
}
