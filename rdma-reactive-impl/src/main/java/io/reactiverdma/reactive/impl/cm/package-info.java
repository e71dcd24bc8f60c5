/**
 * rdma_cm: the event loop thread, client connection attempts, the server's listening id and its accept
 * step. Creates connections; below it, nothing calls back up except through interfaces it implements.
 */
package io.reactiverdma.reactive.impl.cm;
