/**
 * What the connections of one device share: the protection domain, registered memory (the buffer pool and
 * user registrations), flow-control words, shared completion queues, and the device's asynchronous events.
 */
package io.reactiverdma.reactive.impl.device;
