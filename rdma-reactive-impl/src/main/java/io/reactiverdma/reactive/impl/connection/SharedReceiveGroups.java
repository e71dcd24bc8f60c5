package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.device.DeviceResources;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One engine's shared receive queues by server: a server's own SRQ per device, or the one its
 * {@link RdmaOption#SHARED_RECEIVE_QUEUE_GROUP} shares with the engine's other servers of that group, counted
 * by the servers using it and closed after the last. rdma_cm thread only.
 */
public final class SharedReceiveGroups {
    /** The options an SRQ is made of: servers sharing one must agree on them. */
    private static final List<RdmaOption<?>> SHAPE = List.of(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH,
            RdmaOption.RECEIVE_BUFFER_SIZE, RdmaOption.RECEIVE_QUEUE_DEPTH, RdmaOption.IDLE_STRATEGY,
            RdmaOption.POLL_BATCH_SIZE);

    private record Key(DeviceResources device, String group) {
    }

    private static final class Entry {
        final SharedReceives srq;
        final RdmaTransportConfig config;
        int users;

        Entry(SharedReceives srq, RdmaTransportConfig config) {
            this.srq = srq;
            this.config = config;
        }
    }

    private final Map<Key, Entry> groups = new HashMap<>();
    /** Groups' SRQs the device reported broken and replaced, still used by servers until they release them. */
    private final List<Entry> broken = new java.util.ArrayList<>();

    /**
     * The SRQ a server with {@code config} uses on {@code device} (a new one for a server of no group, or the
     * group's first); each call is one use, given back with {@link #release}.
     *
     * @throws InvalidRequestException when the group's SRQ was made with other options than {@code config}'s
     */
    public SharedReceives acquire(DeviceResources device, RdmaTransportConfig config) {
        String group = config.option(RdmaOption.SHARED_RECEIVE_QUEUE_GROUP);
        if (group.isEmpty()) {
            return SharedReceives.create(device, config);
        }
        Key key = new Key(device, group);
        Entry e = groups.get(key);
        if (e != null && e.srq.isBroken()) { // SRQ_ERR: the group's next connections get a new one
            groups.remove(key);
            broken.add(e);
            e = null;
        }
        if (e == null) {
            e = new Entry(SharedReceives.create(device, config), config);
            groups.put(key, e);
        } else {
            for (RdmaOption<?> o : SHAPE) {
                if (!Objects.equals(e.config.option(o), config.option(o))) {
                    throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                            "SHARED_RECEIVE_QUEUE_GROUP " + group + " has " + o.name() + " " + e.config.option(o)
                                    + " on " + device.context().name() + ", this server asks for " + config.option(o));
                }
            }
        }
        e.users++;
        return e.srq;
    }

    /** One use of {@code srq} ended; {@code done} runs once it is closed, or at once while others use it. */
    public void release(SharedReceives srq, Runnable done) {
        for (Map.Entry<Key, Entry> m : groups.entrySet()) {
            Entry e = m.getValue();
            if (e.srq == srq) {
                if (--e.users == 0) {
                    groups.remove(m.getKey());
                    srq.close(done);
                } else {
                    done.run();
                }
                return;
            }
        }
        for (Entry e : broken) {
            if (e.srq == srq) {
                if (--e.users == 0) {
                    broken.remove(e);
                    srq.close(done);
                } else {
                    done.run();
                }
                return;
            }
        }
        srq.close(done); // a server's own
    }
}
