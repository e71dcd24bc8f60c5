package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.RdmaCmThread;

import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineThread;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * The thread that reads one rdma_cm event channel and hands each event to the handler registered for its
 * id (for a CONNECT_REQUEST: the listening id's handler). It also runs tasks: connection set-up and
 * tear-down happen here, so rdma_cm calls on an id are made by one thread, in order with its events.
 */
public final class CmEventLoop implements io.reactiverdma.reactive.impl.connection.RdmaCmThread {
    /** Receives the events of the ids it is registered for, on the loop thread. */
    public interface Handler {
        void onEvent(CmEventInfo event);
    }

    private final CmChannel channel;
    private final Map<Long, Handler> handlers = new ConcurrentHashMap<>();
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean running = true;
    /** The loop ended: tasks handed over from now on run on the caller's thread, one caller at a time. */
    private volatile boolean terminated;

    public CmEventLoop(CmChannel channel, String name) {
        this.channel = channel;
        this.thread = new EngineThread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    public CmChannel channel() {
        return channel;
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    public void register(CmId id, Handler handler) {
        handlers.put(id.key(), handler);
    }

    @Override
    public void unregister(CmId id) {
        handlers.remove(id.key());
    }

    /** Runs {@code task} on the loop thread, after what was queued before it. */
    @Override
    public void execute(Runnable task) {
        tasks.offer(task);
        if (terminated) {
            // A close that outlived a shutdown runs here. With the JNA stack, closing the channel closed its
            // ids (and their QPs) too: such a close then finds them closed, or waits for that close to finish
            // (the native layer's call guard), and never calls on a freed id.
            synchronized (tasks) {
                runTasks();
            }
        } else if (!inLoop()) {
            channel.wakeup();
        }
    }


    /** Ends the loop after the tasks queued so far; the loop thread then destroys the channel. Any thread. */
    public void stop() {
        execute(() -> running = false);
    }

    private void runTasks() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (Throwable t) {
                EngineLog.error("rdma_cm event loop: a task failed", t);
            }
        }
    }

    private void run() {
        try {
            loop();
        } finally {
            terminated = true;
            synchronized (tasks) {
                runTasks();
            }
            try {
                channel.close();
            } catch (Throwable t) {
                EngineLog.error("rdma_cm event loop: destroying its event channel failed", t);
            }
        }
    }

    private void loop() {
        while (running) {
            try {
                Runnable r;
                while ((r = tasks.poll()) != null) {
                    r.run();
                }
                if (!tasks.isEmpty()) {
                    continue;
                }
                channel.await(TimeUnit.SECONDS.toNanos(1));
                CmEventInfo e;
                while ((e = channel.nextEvent()) != null) {
                    dispatch(e);
                }
            } catch (Throwable t) {
                if (running) {
                    EngineLog.error("rdma_cm event loop: an event or task failed", t);
                }
            }
        }
    }

    private void dispatch(CmEventInfo e) {
        CmId key = e.type() == CmEventType.CONNECT_REQUEST ? e.listenId() : e.id();
        Handler h = key == null ? null : handlers.get(key.key());
        if (h == null) {
            if (e.type() == CmEventType.CONNECT_REQUEST && e.id() != null) {
                // Nobody listens any more: refuse rather than leave the peer waiting.
                try {
                    e.id().reject(new byte[0]);
                } finally {
                    e.id().close();
                }
            }
            EngineLog.debug("rdma_cm event for an id nobody handles: " + e);
            return;
        }
        try {
            h.onEvent(e);
        } catch (Throwable t) {
            EngineLog.error("rdma_cm event handler failed on " + e, t);
        }
    }
}
