package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.verbs.AsyncEventType;
import org.junit.jupiter.api.Test;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Review finding 4 (native layer): an engine restarted on the same device within a second (a Spring context
 * refresh, a retire followed by a new engine) must not have two async event readers, because an event read
 * by the old one, whose listeners are gone, is lost for the new engine. The fake device's wake-up does not
 * reach a reader that is inside its read, as a reader blocked in {@code ibv_get_async_event} was not reached
 * (host test: no device needed; the engine's other tests use the loopback device, whose wake-up always
 * arrives, so it could not show this).
 */
class AsyncEventReaderHostTest {
    /** Events come from a queue; wakeupAsyncEvents reaches nobody already waiting. */
    static final class SlowToWakeDevice implements Device {
        final BlockingQueue<AsyncEventInfo> events = new LinkedBlockingQueue<>();

        @Override
        public long key() {
            return 42;
        }

        @Override
        public String name() {
            return "fake-async-" + System.identityHashCode(this);
        }

        @Override
        public int maxCqe() {
            return 1;
        }

        @Override
        public int maxQpRdAtom() {
            return 1;
        }

        @Override
        public int maxSrqWr() {
            return 1;
        }

        @Override
        public ProtectionDomain allocateProtectionDomain() {
            throw new UnsupportedOperationException();
        }

        @Override
        public int numCompVectors() {
            return 1;
        }

        @Override
        public CompletionQueue createCompletionQueue(int entries, boolean events, int pollBatch, int vector,
                String description) {
            throw new UnsupportedOperationException();
        }

        @Override
        public AsyncEventInfo awaitAsyncEvent(long timeoutNs) {
            try {
                return events.poll(timeoutNs, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }

        @Override
        public void wakeupAsyncEvents() {
        }

        final java.util.concurrent.atomic.AtomicInteger stopped = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public void asyncEventsStopped() {
            stopped.incrementAndGet();
        }
    }

    private static long readerThreads(Device d) {
        String name = "rdma-async-events-" + d.name();
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals(name)).count();
    }

    @Test
    void aReattachWithinASecondLeavesOneReaderAndTheNewListenerGetsTheEvent() throws Exception {
        SlowToWakeDevice device = new SlowToWakeDevice();
        CopyOnWriteArrayList<DeviceEvent> first = new CopyOnWriteArrayList<>();
        CopyOnWriteArrayList<DeviceEvent> second = new CopyOnWriteArrayList<>();
        AsyncEventReader.Listener one = new AsyncEventReader.Listener(null, first::add, () -> { });
        AsyncEventReader.Listener two = new AsyncEventReader.Listener(null, second::add, () -> { });
        AsyncEventReader.attach(device, one);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (readerThreads(device) == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        AsyncEventReader.detach(device, one);
        AsyncEventReader.attach(device, two); // the "restarted engine"
        try {
            assertEquals(1, readerThreads(device), "async event reader threads alive for one device");
            device.events.add(new AsyncEventInfo(AsyncEventType.PORT_ACTIVE, 1, -1, null, null));
            while (second.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(5); // polling a condition, bounded by the deadline
            }
            assertEquals(1, second.size(), "the new listener got the event");
            assertTrue(first.isEmpty());
        } finally {
            AsyncEventReader.detach(device, two);
        }
    }

    /**
     * Native-layer finding 11: the device's wake-up eventfd was never closed. The last reader to stop tells
     * the device so (once), and not while another reader of the device took over.
     */
    @Test
    void theLastReaderToStopTellsTheDeviceOnce() throws Exception {
        SlowToWakeDevice device = new SlowToWakeDevice();
        AsyncEventReader.Listener one = new AsyncEventReader.Listener(null, e -> { }, () -> { });
        AsyncEventReader.attach(device, one);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (readerThreads(device) == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        AsyncEventReader.detach(device, one);
        while (readerThreads(device) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5); // polling a condition, bounded by the deadline
        }
        assertEquals(0, readerThreads(device), "the reader stopped");
        assertEquals(1, device.stopped.get(), "the device heard that its async events are no longer read");
    }
}
