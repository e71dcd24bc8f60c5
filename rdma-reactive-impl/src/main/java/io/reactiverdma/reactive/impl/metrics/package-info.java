/** The engine's Micrometer meters. */
package io.reactiverdma.reactive.impl.metrics;
