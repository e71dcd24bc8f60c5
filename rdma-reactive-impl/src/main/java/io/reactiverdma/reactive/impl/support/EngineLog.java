package io.reactiverdma.reactive.impl.support;

/**
 * Where the engine reports what it cannot signal to a subscriber (a dying thread, a failed native
 * release): {@link System.Logger}, so no logging framework is imposed.
 */
public final class EngineLog {
    private static final System.Logger LOG = System.getLogger("io.reactiverdma.reactive.impl");

    private EngineLog() {
    }

    public static void error(String message, Throwable t) {
        LOG.log(System.Logger.Level.ERROR, message, t);
    }

    public static void warn(String message) {
        LOG.log(System.Logger.Level.WARNING, message);
    }

    public static void debug(String message) {
        LOG.log(System.Logger.Level.DEBUG, message);
    }
}
