/** The engine's native boundary ({@code impl.verbs}) over rdma-native-jna: libibverbs and librdmacm. */
package io.reactiverdma.reactive.impl.verbs.jna;
