package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.completion.CompletionQueueHandle;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineThread;

import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.Device;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The one thread per device that reads its asynchronous events ({@code ibv_get_async_event}) and acts on
 * them: a queue pair's fatal, access or request error closes that connection with a typed cause; a CQ error
 * fails the CQ's poller (whose connections then fail); port and GID changes are published; a fatal device
 * is published and retired (its connections fail, its resources are released).
 *
 * <p>One reader per device context, whatever the number of engines in the JVM: rdma_cm opens one context
 * per device for the whole process, and an event read by one reader is gone for every other. Each engine's
 * resources for the device {@link #attach attach} as a listener; every listener sees every event and acts on
 * what is its own.
 */
final class AsyncEventReader {
    /** What one engine does with its device's events. */
    record Listener(DeviceResources resources, Consumer<DeviceEvent> publish, Runnable deviceFatal) {
    }

    private static final Map<Device, AsyncEventReader> READERS = new ConcurrentHashMap<>();
    /** Readers told to stop whose thread may still be inside a read (under the READERS lock). */
    private static final Map<Device, Thread> STOPPING = new ConcurrentHashMap<>();
    /** How long a new reader waits for the previous one of its device (a read waits at most 1 s). */
    private static final long HANDOVER_WAIT_MS = 5_000;

    private final Device device;
    private final Set<Listener> listeners = new CopyOnWriteArraySet<>();
    private final Thread thread;
    private volatile boolean running = true;

    private AsyncEventReader(Device device) {
        this.device = device;
        this.thread = new EngineThread(this::run, "rdma-async-events-" + device.name());
    }

    /**
     * Starts delivering {@code device}'s events to {@code listener} (the reader starts with its first). A
     * reader that was stopped for the same device is waited for first: two readers would each take events,
     * and one the old reader takes reaches none of the new listeners.
     */
    static void attach(Device device, Listener listener) {
        synchronized (READERS) {
            Thread previous = STOPPING.remove(device);
            if (previous != null) {
                try {
                    previous.join(HANDOVER_WAIT_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (previous.isAlive()) {
                    EngineLog.warn("the previous async event reader of " + device.name() + " did not stop within "
                            + HANDOVER_WAIT_MS + " ms; a second one starts");
                }
            }
            AsyncEventReader r = READERS.computeIfAbsent(device, AsyncEventReader::new);
            r.listeners.add(listener);
            if (r.thread.getState() == Thread.State.NEW) {
                r.thread.start();
            }
        }
    }

    /** Stops delivering to {@code listener}; the reader stops with its last. */
    static void detach(Device device, Listener listener) {
        synchronized (READERS) {
            AsyncEventReader r = READERS.get(device);
            if (r != null && r.listeners.remove(listener) && r.listeners.isEmpty()) {
                READERS.remove(device);
                r.running = false;
                if (r.thread.getState() != Thread.State.NEW) {
                    STOPPING.put(device, r.thread);
                }
                device.wakeupAsyncEvents();
            }
        }
    }

    private void run() {
        try {
            read();
        } finally {
            // the last reader of this device: its wake-up fd goes too (a reader that took over, after the
            // handover wait ran out, still uses it)
            if (!READERS.containsKey(device)) {
                device.asyncEventsStopped();
            }
        }
    }

    private void read() {
        while (running) {
            AsyncEventInfo e;
            try {
                e = device.awaitAsyncEvent(TimeUnit.SECONDS.toNanos(1));
            } catch (Throwable t) {
                if (running) {
                    EngineLog.error("reading the async events of " + device.name() + " failed; reader stops", t);
                }
                return;
            }
            if (e != null) {
                for (Listener l : listeners) {
                    try {
                        handle(l, e);
                    } catch (Throwable t) {
                        EngineLog.error("handling async event " + e + " of " + device.name() + " failed", t);
                    }
                }
            }
        }
    }

    private void handle(Listener l, AsyncEventInfo e) {
        switch (e.type()) {
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR -> {
                QueuePairOwner owner = l.resources().ownerOf(e.qpNum());
                if (owner != null) {
                    owner.queuePairFailed(e.type());
                }
            }
            case QP_LAST_WQE_REACHED -> {
                QueuePairOwner owner = l.resources().ownerOf(e.qpNum());
                if (owner != null) {
                    owner.lastWorkRequestReached();
                }
            }
            case CQ_ERR -> {
                CompletionQueueHandle h = l.resources().handleOf(e.cq());
                if (h != null) {
                    h.poller.fail(new RdmaException(device.name() + ": the device reported a CQ error (async event "
                            + "CQ_ERR) on the CQ of poller " + h.poller.name()));
                }
            }
            case SRQ_LIMIT_REACHED, SRQ_ERR -> {
                SharedReceiveQueueOwner owner = l.resources().ownerOf(e.srq());
                if (owner != null) {
                    if (e.type() == io.reactiverdma.verbs.AsyncEventType.SRQ_LIMIT_REACHED) {
                        owner.limitReached();
                    } else {
                        owner.failed(e.type());
                    }
                }
            }
            case PORT_ACTIVE -> l.publish().accept(new DeviceEvent(device.name(), DeviceEvent.Type.PORT_ACTIVE, e.port()));
            case PORT_ERR -> l.publish().accept(new DeviceEvent(device.name(), DeviceEvent.Type.PORT_ERROR, e.port()));
            case GID_CHANGE -> l.publish().accept(new DeviceEvent(device.name(), DeviceEvent.Type.GID_CHANGE, e.port()));
            case LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER ->
                    l.publish().accept(new DeviceEvent(device.name(), DeviceEvent.Type.PORT_CHANGE, e.port()));
            case DEVICE_FATAL -> {
                l.publish().accept(new DeviceEvent(device.name(), DeviceEvent.Type.DEVICE_FATAL, -1));
                l.deviceFatal().run();
            }
            default -> EngineLog.debug(device.name() + ": async event " + e.type() + " (not acted on)");
        }
    }
}
