/**
 * The native boundary of the engine: everything it asks of rdma_cm and the verbs, as interfaces. Two
 * implementations: {@code verbs.jna} over rdma-native-jna (the real stack), and the in-JVM loopback device of
 * the test sources, which enforces the verbs semantics the engine relies on and injects faults on command.
 * Work requests cross this boundary in rdma-native-jna's flyweights ({@code SendWorkRequests},
 * {@code ReceiveWorkRequests}): they are the wire format of a post, not a JNA call.
 */
package io.reactiverdma.reactive.impl.verbs;
