package io.reactiverdma.samples.gateway;

/** The key has no value (HTTP 404). */
public class KeyNotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KeyNotFoundException(String key) {
        super("no value for key '" + key + "'");
    }
}
