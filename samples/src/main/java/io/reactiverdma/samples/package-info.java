/**
 * Runnable samples on the reactive API ({@code io.reactiverdma.reactive}). They compile against the API only;
 * the engine is found at run time. {@link io.reactiverdma.samples.echo.Echo}: an echo server and a
 * ping-pong client that checks every reply byte for byte ({@code scripts/demo}).
 * {@link io.reactiverdma.samples.bulk.BulkTransfer}: a bulk transfer in registered chunks with a bounded
 * window, push (RDMA WRITE) or pull (RDMA READ), SHA-256 of both ends compared ({@code scripts/demo bulk}).
 */
package io.reactiverdma.samples;
