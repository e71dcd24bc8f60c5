package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.Device;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The one thread per device that reads its asynchronous events ({@code ibv_get_async_event}) and acts on
 * them: a queue pair's fatal, access or request error closes that connection with a typed cause; a CQ error
 * fails the CQ's poller (whose connections then fail); port and GID changes are published; a fatal device
 * is published and retired (its connections fail, its resources are released).
 */
final class AsyncEventReader {
    private final Device device;
    private final DeviceResources resources;
    private final Consumer<DeviceEvent> publish;
    private final Runnable deviceFatal;
    private final Thread thread;
    private volatile boolean running = true;

    AsyncEventReader(Device device, DeviceResources resources, Consumer<DeviceEvent> publish, Runnable deviceFatal) {
        this.device = device;
        this.resources = resources;
        this.publish = publish;
        this.deviceFatal = deviceFatal;
        this.thread = new EngineThread(this::run, "rdma-async-events-" + device.name());
    }

    void start() {
        thread.start();
    }

    void stop() {
        running = false;
        device.wakeupAsyncEvents();
    }

    private void run() {
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
                try {
                    handle(e);
                } catch (Throwable t) {
                    EngineLog.error("handling async event " + e + " of " + device.name() + " failed", t);
                }
            }
        }
    }

    void handle(AsyncEventInfo e) {
        switch (e.type()) {
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR -> {
                EngineConnection c = resources.connectionOf(e.qpNum());
                if (c != null) {
                    c.closeFromAnyThread(new ConnectionClosedException(c.description() + ": the device reported "
                            + e.type().describe() + " (async event " + e.type() + ") on its queue pair"));
                }
            }
            case CQ_ERR -> {
                CompletionQueueHandle h = resources.handleOf(e.cq());
                if (h != null) {
                    h.poller.fail(new RdmaException(device.name() + ": the device reported a CQ error (async event "
                            + "CQ_ERR) on the CQ of poller " + h.poller.name()));
                }
            }
            case PORT_ACTIVE -> publish.accept(new DeviceEvent(device.name(), DeviceEvent.Type.PORT_ACTIVE, e.port()));
            case PORT_ERR -> publish.accept(new DeviceEvent(device.name(), DeviceEvent.Type.PORT_ERROR, e.port()));
            case GID_CHANGE -> publish.accept(new DeviceEvent(device.name(), DeviceEvent.Type.GID_CHANGE, e.port()));
            case LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER ->
                    publish.accept(new DeviceEvent(device.name(), DeviceEvent.Type.PORT_CHANGE, e.port()));
            case DEVICE_FATAL -> {
                publish.accept(new DeviceEvent(device.name(), DeviceEvent.Type.DEVICE_FATAL, -1));
                deviceFatal.run();
            }
            default -> EngineLog.debug(device.name() + ": async event " + e.type() + " (not acted on)");
        }
    }
}
