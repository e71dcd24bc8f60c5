/** What every layer of the engine uses: its threads, its timer, its log, and rdma_cm event names. */
package io.reactiverdma.reactive.impl.support;
