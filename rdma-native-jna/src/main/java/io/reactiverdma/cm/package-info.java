/**
 * Plain Java bindings to librdmacm (rdma-core), through JNA: connection management for RDMA.
 *
 * <p>An {@link io.reactiverdma.cm.EventChannel} carries the events of the {@link io.reactiverdma.cm.RdmaCmId}s
 * created on it; every operation on an id starts something whose outcome arrives as a
 * {@link io.reactiverdma.cm.CmEvent}. Events are copied and acknowledged before they are returned, so a
 * caller may keep them, and {@link io.reactiverdma.cm.EventChannel#getEvent(java.time.Duration)} waits with a
 * timeout rather than forever. An id's QP comes from {@link io.reactiverdma.cm.RdmaCmId#createQueuePair},
 * with a PD allocated on {@link io.reactiverdma.cm.RdmaCmId#verbsContext()} (librdmacm's own device context);
 * it is an ordinary {@link io.reactiverdma.verbs.QueuePair} for posting and polling.
 *
 * <p>Closing a channel closes its ids, an id its QP; closing twice is harmless and use after close throws
 * {@link io.reactiverdma.natives.ClosedResourceException} in any state. A failed call throws
 * {@link io.reactiverdma.natives.NativeCallException} naming it and its errno. Defaults are finite
 * ({@link io.reactiverdma.cm.ConnParam}: retry 6, RNR retry 3; RNR retry 7, "forever", is refused).
 */
package io.reactiverdma.cm;
