/**
 * Micrometer for the reactive RDMA API: the engine's meters in a registry of your choice
 * ({@link io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder}) and Observations around connects and
 * accepts ({@link io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver}). The only package of the API
 * that names Micrometer, an optional dependency: the rest of the API loads without it.
 */
package io.reactiverdma.reactive.micrometer;
