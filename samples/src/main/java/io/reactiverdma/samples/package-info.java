/** Runnable samples. */
package io.reactiverdma.samples;
