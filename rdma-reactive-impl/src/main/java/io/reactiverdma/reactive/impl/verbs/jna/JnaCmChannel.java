package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.cm.CmEvent;
import io.reactiverdma.cm.EventChannel;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.cm.RdmaCmId;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.verbs.WakeupFd;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** An rdma_cm event channel with an eventfd to wake its reader. */
final class JnaCmChannel implements CmChannel {
    private final JnaRdmaStack stack;
    private final EventChannel channel;
    private final WakeupFd wakeup;
    /** The wrapper of every live id of this channel, so an event names the same object the engine holds. */
    private final Map<Long, JnaCmId> ids = new ConcurrentHashMap<>();

    JnaCmChannel(JnaRdmaStack stack) {
        this.stack = stack;
        this.channel = EventChannel.create();
        try {
            this.wakeup = WakeupFd.create();
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public CmId createId(PortSpace portSpace) {
        return wrap(RdmaCmId.create(channel, portSpace));
    }

    private JnaCmId wrap(RdmaCmId id) {
        return ids.computeIfAbsent(id.address(), k -> new JnaCmId(stack, this, id));
    }

    void forget(JnaCmId id) {
        ids.remove(id.key(), id);
    }

    @Override
    public CmEventInfo nextEvent() {
        CmEvent e = channel.getEvent(Duration.ZERO);
        if (e == null) {
            return null;
        }
        return new CmEventInfo(e.type(), e.status(), wrap(e.id()), e.listenId() == null ? null : wrap(e.listenId()),
                e.privateData(), e.ahAttr() == null ? null
                        : new io.reactiverdma.reactive.impl.verbs.DatagramRoute(e.remoteQpNum(), e.qkey(), e.ahAttr()));
    }

    @Override
    public void await(long timeoutNs) {
        wakeup.awaitReadable(channel.fd(), timeoutNs);
    }

    @Override
    public void wakeup() {
        try {
            wakeup.signal();
        } catch (io.reactiverdma.natives.ClosedResourceException closedAlready) {
            // the channel was closed: nobody to wake
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } finally {
            wakeup.close();
        }
    }
}
