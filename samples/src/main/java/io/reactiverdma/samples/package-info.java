/**
 * Runnable samples on the reactive API ({@code io.reactiverdma.reactive}). They compile against the API only;
 * the engine is found at run time. {@link io.reactiverdma.samples.echo.Echo}: an echo server and a
 * ping-pong client that checks every reply byte for byte ({@code scripts/demo}).
 * {@link io.reactiverdma.samples.bulk.BulkTransfer}: a bulk transfer in registered chunks with a bounded
 * window, push (RDMA WRITE) or pull (RDMA READ), SHA-256 of both ends compared ({@code scripts/demo bulk}).
 * {@link io.reactiverdma.samples.feed.MarketDataFeed}: a market-data feed on an RDMA multicast group over
 * unreliable datagrams, sequence numbers, gap detection and loss counts per subscriber ({@code scripts/demo feed}).
 */
package io.reactiverdma.samples;
