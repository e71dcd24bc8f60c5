/** Service-provider interface between the public API and the engine that implements it. */
package io.reactiverdma.reactive.spi;
