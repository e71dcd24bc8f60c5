/**
 * The public reactive RDMA API: connections, servers, clients, messages and remote regions as Project
 * Reactor types. Names no JNA type and no engine class.
 */
package io.reactiverdma.reactive;
