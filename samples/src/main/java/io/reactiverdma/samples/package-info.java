/**
 * Runnable samples on the reactive API ({@code io.reactiverdma.reactive}). They compile against the API only;
 * the engine is found at run time. {@link io.reactiverdma.samples.echo.Echo}: an echo server and a
 * ping-pong client that checks every reply byte for byte ({@code scripts/demo}).
 */
package io.reactiverdma.samples;
