package io.reactiverdma.reactive;

/** Base of every exception the reactive API signals; unchecked, as Reactor's error signals are. */
public class RdmaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RdmaException(String message) {
        super(message);
    }

    public RdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
