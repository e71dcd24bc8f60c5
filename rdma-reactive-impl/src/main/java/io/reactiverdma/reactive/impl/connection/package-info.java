/**
 * One RC connection, owned by the poller thread of its completion queue: its send queue, receive queue,
 * flow control, negotiation and close sequence, and the Monos and Flux the API hands out for it.
 */
package io.reactiverdma.reactive.impl.connection;
