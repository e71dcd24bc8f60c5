/**
 * The reactive engine behind {@code io.reactiverdma.reactive}: here only the provider ({@link
 * io.reactiverdma.reactive.impl.RdmaEngine}, found by {@link java.util.ServiceLoader}). Its parts, by layer,
 * imports only running down: {@code cm} (rdma_cm: the event loop, client attempts, the server) over
 * {@code connection} (one connection, owned by its poller thread) over {@code device} (per-device resources)
 * over {@code completion} (pollers and the wr_id table) over {@code verbs} (the native boundary, with
 * {@code verbs.jna} the real stack); {@code metrics} and {@code support} serve them all.
 */
package io.reactiverdma.reactive.impl;
