/** The reactive engine behind {@code io.reactiverdma.reactive}: completion pollers, pending operations, rdma_cm event loop. */
package io.reactiverdma.reactive.impl;
