package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.cm.ConnParam;
import io.reactiverdma.cm.RdmaCmId;
import io.reactiverdma.reactive.impl.verbs.AddressHandle;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.DatagramRoute;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.QpInitAttributes;

import java.net.InetSocketAddress;

final class JnaCmId implements CmId {
    private final JnaRdmaStack stack;
    private final JnaCmChannel channel;
    final RdmaCmId id;
    private final long key;

    JnaCmId(JnaRdmaStack stack, JnaCmChannel channel, RdmaCmId id) {
        this.stack = stack;
        this.channel = channel;
        this.id = id;
        this.key = id.address();
    }

    @Override
    public long key() {
        return key;
    }

    @Override
    public String description() {
        return id.description();
    }

    @Override
    public void bind(InetSocketAddress local) {
        id.bind(local);
    }

    @Override
    public void listen(int backlog) {
        id.listen(backlog);
    }

    @Override
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMs) {
        id.resolveAddress(source, destination, timeoutMs);
    }

    @Override
    public void resolveRoute(int timeoutMs) {
        id.resolveRoute(timeoutMs);
    }

    @Override
    public Device device() {
        return stack.device(id.verbsContext());
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, CompletionQueue cq, QpSpec spec) {
        return queuePair(pd, QpInitAttributes.rc(((JnaCompletionQueue) cq).cq())
                .srq(spec.srq() == null ? null : ((JnaSharedReceiveQueue) spec.srq()).srq), spec);
    }

    private QueuePair queuePair(ProtectionDomain pd, QpInitAttributes type, QpSpec spec) {
        return new JnaQueuePair(id.createQueuePair(((JnaProtectionDomain) pd).pd, type.maxSendWr(spec.maxSendWr())
                .maxRecvWr(spec.maxRecvWr()).maxSendSge(1).maxRecvSge(1).maxInlineData(spec.maxInlineData())));
    }

    @Override
    public QueuePair createDatagramQueuePair(ProtectionDomain pd, CompletionQueue cq, QpSpec spec) {
        return queuePair(pd, QpInitAttributes.ud(((JnaCompletionQueue) cq).cq()), spec);
    }

    @Override
    public int activeMtu() {
        return id.verbsContext().queryPort(id.portNum()).activeMtu().bytes();
    }

    @Override
    public void acceptDatagram(int qpNum) {
        id.accept(ConnParam.create().userQp(qpNum, false));
    }

    @Override
    public void joinMulticast(InetSocketAddress group) {
        id.joinMulticast(group);
    }

    @Override
    public void leaveMulticast(InetSocketAddress group) {
        id.leaveMulticast(group);
    }

    @Override
    public AddressHandle createAddressHandle(ProtectionDomain pd, DatagramRoute route) {
        return new JnaAddressHandle(((JnaProtectionDomain) pd).pd.createAddressHandle(route.attributes()));
    }

    @Override
    public AddressHandle createReplyAddressHandle(ProtectionDomain pd, java.nio.ByteBuffer grh, int sourceQpn) {
        try {
            return new JnaAddressHandle(((JnaProtectionDomain) pd).pd.createAddressHandleFromGrh(
                    com.sun.jna.Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(grh.slice())), sourceQpn,
                    id.portNum()));
        } finally {
            // ibv_create_ah_from_wc reads the GRH by address: the buffer must not be freed before it returns
            java.lang.ref.Reference.reachabilityFence(grh);
        }
    }

    @Override
    public void destroyQueuePair() {
        id.destroyQueuePair();
    }

    private static ConnParam param(ConnectSpec spec) {
        ConnParam p = ConnParam.create().responderResources(spec.responderResources())
                .initiatorDepth(spec.initiatorDepth()).retryCount(spec.retryCount())
                .rnrRetryCount(spec.rnrRetryCount());
        return spec.privateData() == null ? p : p.privateData(spec.privateData());
    }

    @Override
    public void setTypeOfService(int tos) {
        id.setTypeOfService(tos);
    }

    @Override
    public void setAckTimeout(int exponent) {
        id.setAckTimeout(exponent);
    }

    @Override
    public void connect(ConnectSpec spec) {
        id.connect(param(spec));
    }

    @Override
    public void accept(ConnectSpec spec) {
        id.accept(param(spec));
    }

    @Override
    public void reject(byte[] privateData) {
        id.reject(privateData);
    }

    @Override
    public void disconnect() {
        id.disconnect();
    }

    @Override
    public void close() {
        channel.forget(this);
        id.close();
    }

    @Override
    public boolean isClosed() {
        return id.isClosed();
    }

    @Override
    public InetSocketAddress localAddress() {
        return id.isClosed() ? null : id.localAddress();
    }

    @Override
    public InetSocketAddress peerAddress() {
        try {
            return id.isClosed() ? null : id.peerAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return description();
    }
}
