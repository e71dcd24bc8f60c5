package io.reactiverdma.reactive.impl;

/**
 * Where the engine reports what it cannot signal to a subscriber (a dying thread, a failed native
 * release): {@link System.Logger}, so no logging framework is imposed.
 */
final class EngineLog {
    private static final System.Logger LOG = System.getLogger("io.reactiverdma.reactive.impl");

    private EngineLog() {
    }

    static void error(String message, Throwable t) {
        LOG.log(System.Logger.Level.ERROR, message, t);
    }

    static void warn(String message) {
        LOG.log(System.Logger.Level.WARNING, message);
    }

    static void debug(String message) {
        LOG.log(System.Logger.Level.DEBUG, message);
    }
}
