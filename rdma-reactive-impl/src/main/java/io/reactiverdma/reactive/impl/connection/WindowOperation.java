package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.verbs.SendWorkRequests;

/**
 * The bind or the invalidation of an {@link ExposedWindow} ({@link Operation#bind},
 * {@link Operation#invalidate}): the window writes its work request and learns the outcome when the
 * operation's holds are dropped; a bind emits the window (the exposed region), an invalidation completes
 * empty.
 */
final class WindowOperation extends ValueOperation {
    private final ExposedWindow window;

    WindowOperation(SendQueue queue, OperationType type, ExposedWindow window) {
        super(queue, type, null, false, 0);
        this.window = window;
    }

    @Override
    boolean writeWorkRequest(SendWorkRequests wr, long wrId, int inlineLimit) {
        window.writeWorkRequest(type, wr, wrId);
        return false;
    }

    @Override
    void dropHolds(boolean succeeded) {
        window.operationDone(type, succeeded, cancelled);
    }

    @Override
    Object result() {
        return type == OperationType.BIND_WINDOW ? window : null;
    }
}
