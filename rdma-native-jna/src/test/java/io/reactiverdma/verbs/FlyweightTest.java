package io.reactiverdma.verbs;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The flyweights write exactly the C layout (checked against raw offsets) and read back what they wrote. */
class FlyweightTest {

    @Test
    void sendWorkRequestsLinkTheChainAndPointAtTheirSges() {
        SendWorkRequests s = new SendWorkRequests(3, 2);
        ByteBuffer b = s.buffer();
        int w0 = s.add(0x1111, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED | SendFlags.FENCE);
        s.sge(w0, 0xAAAA0000L, 100, 0x55).sge(w0, 0xBBBB0000L, 200, 0x66).rdma(w0, 0xDEAD0000L, 0x1234);
        int w1 = s.add(0x2222, WrOpcode.SEND_WITH_IMM, 0);
        s.sge(w1, 0xCCCC0000L, 300, 0x77).immData(w1, 0x01020304);
        int w2 = s.add(0x3333, WrOpcode.ATOMIC_CMP_AND_SWP, SendFlags.SIGNALED);
        s.atomic(w2, 0x8000L, 0x99, 42L, 43L);

        assertEquals(3, s.count());
        // next pointers form the chain; the last one is NULL.
        assertEquals(s.address() + SendWorkRequests.SIZE, b.getLong(SendWorkRequests.NEXT_OFFSET));
        assertEquals(s.address(1), s.next(0));
        assertEquals(s.address(2), s.next(1));
        assertEquals(0L, s.next(2));
        // sg_list points at this WR's own SGE array, after the WRs.
        long sge0 = s.sgList(0);
        assertEquals(s.address() + 3L * SendWorkRequests.SIZE, sge0);
        assertEquals(sge0 + 2L * Sge.SIZE, s.sgList(1));
        int sgeOff = (int) (sge0 - s.address());
        assertEquals(0xAAAA0000L, b.getLong(sgeOff + Sge.ADDR_OFFSET));
        assertEquals(100, b.getInt(sgeOff + Sge.LENGTH_OFFSET));
        assertEquals(0x55, b.getInt(sgeOff + Sge.LKEY_OFFSET));
        assertEquals(0xBBBB0000L, b.getLong(sgeOff + Sge.SIZE + Sge.ADDR_OFFSET));
        assertEquals(2, b.getInt(SendWorkRequests.NUM_SGE_OFFSET));
        assertEquals(WrOpcode.RDMA_WRITE.value(), b.getInt(SendWorkRequests.OPCODE_OFFSET));
        assertEquals(SendFlags.SIGNALED | SendFlags.FENCE, b.getInt(SendWorkRequests.SEND_FLAGS_OFFSET));
        assertEquals(0xDEAD0000L, b.getLong(SendWorkRequests.RDMA_REMOTE_ADDR_OFFSET));
        assertEquals(0x1234, b.getInt(SendWorkRequests.RDMA_RKEY_OFFSET));
        // Immediate data is stored big-endian (network order).
        int w1Off = SendWorkRequests.SIZE;
        assertEquals(0x01, b.get(w1Off + SendWorkRequests.IMM_DATA_OFFSET));
        assertEquals(0x04, b.get(w1Off + SendWorkRequests.IMM_DATA_OFFSET + 3));
        assertEquals(0x01020304, s.immData(1));
        assertEquals(WrOpcode.SEND_WITH_IMM, s.opcode(1));
        assertEquals(0x2222, s.wrId(1));
        assertEquals(300, s.sgeLength(1, 0));
        assertEquals(0x77, s.sgeLkey(1, 0));
        // Atomic operands.
        int w2Off = 2 * SendWorkRequests.SIZE;
        assertEquals(0x8000L, b.getLong(w2Off + SendWorkRequests.ATOMIC_REMOTE_ADDR_OFFSET));
        assertEquals(42L, s.compareAdd(2));
        assertEquals(43L, s.swap(2));
        assertEquals(0x99, s.atomicRkey(2));
        assertEquals(0, s.numSge(2));
    }

    @Test
    void sendWorkRequestsGuardTheirBounds() {
        SendWorkRequests s = new SendWorkRequests(1, 1);
        int i = s.add(1, WrOpcode.SEND, 0);
        s.sge(i, 1L, 1, 1);
        assertThrows(IllegalStateException.class, () -> s.sge(i, 2L, 1, 1), "more SGEs than maxSge");
        assertThrows(IllegalStateException.class, () -> s.add(2, WrOpcode.SEND, 0), "chain full");
        assertThrows(IndexOutOfBoundsException.class, () -> s.rdma(1, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> s.sgeAddr(0, 1));
        assertThrows(IllegalArgumentException.class, () -> s.atomic(i, 0x1004L, 1, 0, 0), "unaligned atomic");
        assertThrows(NullPointerException.class, () -> s.add(3, null, 0));
        assertThrows(IllegalArgumentException.class, () -> new SendWorkRequests(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new SendWorkRequests(1, -1));
        assertEquals(-1, s.failedIndex());
    }

    @Test
    void clearingReusesTheChainAndRewritesEveryField() {
        SendWorkRequests s = new SendWorkRequests(2, 1);
        s.sge(s.add(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED), 5L, 5, 5).rdma(0, 9L, 9);
        s.add(2, WrOpcode.SEND, 0);
        s.clear();
        assertEquals(0, s.count());
        int i = s.add(3, WrOpcode.SEND, 0);
        assertEquals(0, i);
        assertEquals(0, s.numSge(0), "SGE count reset");
        assertEquals(0L, s.remoteAddr(0), "union reset");
        assertEquals(0L, s.next(0), "the last work request ends the chain again");
        assertEquals(3, s.wrId(0));
    }

    /**
     * A slot is a template patched in place (issue 20): after any setter, or a write through {@code buffer()},
     * the slot's next {@code add} still leaves every field it does not set at 0, and one that no setter
     * touched keeps its template (only the first 36 bytes rewritten).
     */
    @Test
    void aReusedSlotReadsZeroInEveryFieldItsAddDidNotSet() {
        java.util.List<java.util.function.Consumer<SendWorkRequests>> setters = java.util.List.of(
                s -> s.rdma(0, 0x1111L, 0x22),
                s -> s.atomic(0, 0x8000L, 0x33, 44L, 55L),
                s -> s.immData(0, 0x01020304),
                s -> s.invalidateRkey(0, 0x66),
                s -> s.buffer().putLong(SendWorkRequests.SIZE - 8, -1L));
        for (int k = 0; k < setters.size(); k++) {
            SendWorkRequests s = new SendWorkRequests(2, 1);
            s.sge(s.add(7, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED | SendFlags.INLINE), 5L, 5, 5);
            setters.get(k).accept(s);
            s.add(8, WrOpcode.SEND, 0);
            s.clear();
            int i = s.add(9, WrOpcode.SEND, 0);
            ByteBuffer b = s.buffer();
            for (int at = SendWorkRequests.IMM_DATA_OFFSET; at < SendWorkRequests.SIZE; at++) {
                assertEquals(0, b.get(at), "setter " + k + ": byte " + at + " of the reused slot");
            }
            assertEquals(9L, s.wrId(i));
            assertEquals(0L, s.next(i));
            assertEquals(0, s.numSge(i));
            assertEquals(0, s.sendFlags(i));
            assertEquals(WrOpcode.SEND, s.opcode(i));
            assertEquals(s.address() + 2L * SendWorkRequests.SIZE, s.sgList(i));
        }
    }

    @Test
    void failedIndexNamesTheBadWorkRequest() {
        SendWorkRequests s = new SendWorkRequests(4, 1);
        for (int k = 0; k < 3; k++) {
            s.add(k, WrOpcode.SEND, 0);
        }
        s.buffer().putLong(4 * SendWorkRequests.SIZE + 4 * Sge.SIZE, s.address(2)); // what the provider writes
        assertEquals(2, s.failedIndex());
        s.clearBadWr();
        assertEquals(-1, s.failedIndex());
    }

    @Test
    void receiveWorkRequestsLinkTheChain() {
        ReceiveWorkRequests r = new ReceiveWorkRequests(2, 2);
        int a = r.add(10, 0x1000L, 64, 7);
        int b = r.add(11);
        r.sge(b, 0x2000L, 32, 8).sge(b, 0x3000L, 16, 8);
        ByteBuffer buf = r.buffer();
        assertEquals(r.address(1), buf.getLong(ReceiveWorkRequests.NEXT_OFFSET));
        assertEquals(0L, r.next(b));
        assertEquals(10, r.wrId(a));
        assertEquals(1, r.numSge(a));
        assertEquals(2, r.numSge(b));
        assertEquals(r.address() + 2L * ReceiveWorkRequests.SIZE, r.sgList(a));
        assertEquals(r.sgList(a) + 2L * Sge.SIZE, r.sgList(b));
        assertEquals(0x3000L, r.sgeAddr(b, 1));
        assertEquals(16, r.sgeLength(b, 1));
        assertEquals(8, r.sgeLkey(b, 1));
        assertThrows(IllegalStateException.class, () -> r.add(12));
    }

    @Test
    void workCompletionsReadEveryFieldAtItsOffset() {
        WorkCompletions w = new WorkCompletions(2);
        ByteBuffer b = w.buffer();
        int o = WorkCompletions.SIZE; // entry 1
        b.putLong(o + WorkCompletions.WR_ID_OFFSET, 0x123456789L);
        b.putInt(o + WorkCompletions.STATUS_OFFSET, WcStatus.REM_ACCESS_ERR.value());
        b.putInt(o + WorkCompletions.OPCODE_OFFSET, WcOpcode.RECV_RDMA_WITH_IMM.value());
        b.putInt(o + WorkCompletions.VENDOR_ERR_OFFSET, 0x55);
        b.putInt(o + WorkCompletions.BYTE_LEN_OFFSET, 4096);
        b.put(o + WorkCompletions.IMM_DATA_OFFSET, (byte) 0xCA); // big-endian 0xCAFEBABE
        b.put(o + WorkCompletions.IMM_DATA_OFFSET + 1, (byte) 0xFE);
        b.put(o + WorkCompletions.IMM_DATA_OFFSET + 2, (byte) 0xBA);
        b.put(o + WorkCompletions.IMM_DATA_OFFSET + 3, (byte) 0xBE);
        b.putInt(o + WorkCompletions.QP_NUM_OFFSET, 17);
        b.putInt(o + WorkCompletions.SRC_QP_OFFSET, 18);
        b.putInt(o + WorkCompletions.WC_FLAGS_OFFSET, WcFlags.WITH_IMM | WcFlags.GRH);
        b.putShort(o + WorkCompletions.PKEY_INDEX_OFFSET, (short) 3);
        b.putShort(o + WorkCompletions.SLID_OFFSET, (short) 0xfffe);
        b.put(o + WorkCompletions.SL_OFFSET, (byte) 5);
        b.put(o + WorkCompletions.DLID_PATH_BITS_OFFSET, (byte) 6);
        w.count(2);

        assertEquals(0x123456789L, w.wrId(1));
        assertEquals(WcStatus.REM_ACCESS_ERR, w.status(1));
        assertTrue(!w.isSuccess(1));
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, w.opcode(1));
        assertEquals(0x55, w.vendorErr(1));
        assertEquals(4096, w.byteLen(1));
        assertEquals(0xCAFEBABE, w.immData(1));
        assertTrue(w.hasImmData(1));
        assertEquals(17, w.qpNum(1));
        assertEquals(18, w.srcQp(1));
        assertEquals(3, w.pkeyIndex(1));
        assertEquals(0xfffe, w.slid(1));
        assertEquals(5, w.sl(1));
        assertEquals(6, w.dlidPathBits(1));
        assertEquals(w.address() + WorkCompletions.SIZE, w.address(1));
        assertEquals(WcStatus.SUCCESS, w.status(0));
        assertThrows(IndexOutOfBoundsException.class, () -> w.wrId(2));
        assertTrue(w.describe(1).contains("REM_ACCESS_ERR"), w.describe(1));
    }

    /**
     * Defect 7 of the engine-core issue: the accessors checked the index against the capacity, so after a
     * poll that returned fewer completions than the one before, an index past the count read the earlier
     * poll's stale completion as if it were new.
     */
    @Test
    void workCompletionsRefuseAnIndexPastTheLastPollsCount() {
        WorkCompletions w = new WorkCompletions(4);
        w.buffer().putLong(WorkCompletions.SIZE + WorkCompletions.WR_ID_OFFSET, 0xdeadL);
        w.count(2);
        assertEquals(0xdeadL, w.wrId(1));
        w.count(1); // the next poll returned one completion: entry 1 is the previous poll's
        assertThrows(IndexOutOfBoundsException.class, () -> w.wrId(1));
        assertThrows(IndexOutOfBoundsException.class, () -> w.status(1));
        assertThrows(IndexOutOfBoundsException.class, () -> w.address(1));
    }

    @Test
    void qpAttributesRoundTripThroughTheCStruct() {
        Gid dgid = Gid.parse("::ffff:10.77.0.1");
        QpAttributes a = new QpAttributes().qpState(QpState.RTR).pathMtu(Mtu.MTU_4096).qkey(0x77).rqPsn(0xabcdef)
                .sqPsn(0x123456).destQpNum(0x11).accessFlags(AccessFlags.ALL_REMOTE).pkeyIndex(2).maxRdAtomic(4)
                .maxDestRdAtomic(5).minRnrTimer(9).portNum(1).timeout(20).retryCnt(7).rnrRetry(0)
                .addressVector(new AddressHandleAttributes().global(dgid, 3).hopLimit(1).trafficClass(8).flowLabel(0x12345)
                        .serviceLevel(2).portNum(1));
        ByteBuffer b = Buffers.allocate(QpAttributes.SIZE);
        a.writeTo(b, 0);
        assertEquals(QpState.RTR.value(), b.getInt(QpAttributes.QP_STATE_OFFSET));
        assertEquals(Mtu.MTU_4096.value(), b.getInt(QpAttributes.PATH_MTU_OFFSET));
        assertEquals(0xabcdef, b.getInt(QpAttributes.RQ_PSN_OFFSET));
        assertEquals(20, b.get(QpAttributes.TIMEOUT_OFFSET));
        assertEquals(0, b.get(QpAttributes.RNR_RETRY_OFFSET));
        assertEquals(1, b.get(QpAttributes.AH_ATTR_IS_GLOBAL_OFFSET));
        assertEquals(3, b.get(QpAttributes.AH_ATTR_OFFSET + AddressHandleAttributes.GRH_SGID_INDEX_OFFSET));
        assertEquals(dgid, Gid.read(b, QpAttributes.AH_ATTR_GRH_DGID_OFFSET));

        QpAttributes r = QpAttributes.read(b, 0);
        assertEquals(QpState.RTR, r.qpState());
        assertEquals(Mtu.MTU_4096, r.pathMtu());
        assertEquals(0x77, r.qkey());
        assertEquals(0xabcdef, r.rqPsn());
        assertEquals(0x123456, r.sqPsn());
        assertEquals(0x11, r.destQpNum());
        assertEquals(AccessFlags.ALL_REMOTE, r.accessFlags());
        assertEquals(2, r.pkeyIndex());
        assertEquals(4, r.maxRdAtomic());
        assertEquals(5, r.maxDestRdAtomic());
        assertEquals(9, r.minRnrTimer());
        assertEquals(20, r.timeout());
        assertEquals(7, r.retryCnt());
        assertEquals(0, r.rnrRetry());
        AddressHandleAttributes av = r.addressVector();
        assertTrue(av.isGlobal());
        assertEquals(dgid, av.dgid());
        assertEquals(3, av.sgidIndex());
        assertEquals(1, av.hopLimit());
        assertEquals(8, av.trafficClass());
        assertEquals(0x12345, av.flowLabel());
        assertEquals(2, av.serviceLevel());
    }

    @Test
    void qpInitAttributesCarryTheirCapabilities() {
        QpInitAttributes init = new QpInitAttributes(QpType.UD).maxSendWr(100).maxRecvWr(200).maxSendSge(3)
                .maxRecvSge(4).maxInlineData(64).signalAll(true);
        assertEquals(QpType.UD, init.type());
        ByteBuffer noCqs = Buffers.allocate(QpInitAttributes.SIZE);
        noCqs.putLong(QpInitAttributes.SEND_CQ_OFFSET, -1L);
        init.writeTo(noCqs, 0); // CQs not set: NULL, for rdma_create_qp to fill in
        assertEquals(0L, noCqs.getLong(QpInitAttributes.SEND_CQ_OFFSET));
        assertEquals(0L, noCqs.getLong(QpInitAttributes.RECV_CQ_OFFSET));
        assertEquals(QpType.UD.value(), noCqs.getInt(QpInitAttributes.QP_TYPE_OFFSET));
        assertEquals(1, noCqs.getInt(QpInitAttributes.SQ_SIG_ALL_OFFSET));
        assertEquals(100, noCqs.getInt(QpInitAttributes.CAP_MAX_SEND_WR_OFFSET));
        assertThrows(IllegalArgumentException.class, () -> init.maxSendWr(0));
        ByteBuffer b = Buffers.allocate(QpInitAttributes.SIZE);
        new QpCapabilities(100, 200, 3, 4, 64).writeTo(b, QpInitAttributes.CAP_OFFSET);
        assertEquals(100, b.getInt(QpInitAttributes.CAP_MAX_SEND_WR_OFFSET));
        assertEquals(200, b.getInt(QpInitAttributes.CAP_MAX_RECV_WR_OFFSET));
        assertEquals(3, b.getInt(QpInitAttributes.CAP_MAX_SEND_SGE_OFFSET));
        assertEquals(4, b.getInt(QpInitAttributes.CAP_MAX_RECV_SGE_OFFSET));
        assertEquals(64, b.getInt(QpInitAttributes.CAP_MAX_INLINE_DATA_OFFSET));
        com.sun.jna.Memory m = new com.sun.jna.Memory(QpInitAttributes.SIZE);
        byte[] bytes = new byte[QpInitAttributes.SIZE];
        b.get(0, bytes);
        m.write(0, bytes, 0, bytes.length);
        assertEquals(new QpCapabilities(100, 200, 3, 4, 64), QpInitAttributes.readCapabilities(m));
    }

    @Test
    void portAndDeviceAttributesDecodeTheirStructs() {
        ByteBuffer p = Buffers.allocate(PortAttributes.SIZE);
        p.putInt(PortAttributes.STATE_OFFSET, 4);
        p.putInt(PortAttributes.ACTIVE_MTU_OFFSET, 5);
        p.putInt(PortAttributes.MAX_MTU_OFFSET, 5);
        p.putInt(PortAttributes.GID_TBL_LEN_OFFSET, 1024);
        p.putInt(PortAttributes.MAX_MSG_SZ_OFFSET, 0x80000000);
        p.put(PortAttributes.LINK_LAYER_OFFSET, (byte) 2);
        p.putShort(PortAttributes.PORT_CAP_FLAGS2_OFFSET, (short) 0x8001);
        PortAttributes port = PortAttributes.read(p, 0);
        assertEquals(PortState.ACTIVE, port.state());
        assertEquals(Mtu.MTU_4096, port.activeMtu());
        assertEquals(1024, port.gidTableLength());
        assertEquals(0x80000000L, port.maxMessageSize());
        assertTrue(port.isEthernet());
        assertEquals(0x8001, port.portCapFlags2());

        ByteBuffer d = Buffers.allocate(DeviceAttributes.SIZE);
        byte[] fw = "1.2.3".getBytes();
        for (int i = 0; i < fw.length; i++) {
            d.put(DeviceAttributes.FW_VER_OFFSET + i, fw[i]);
        }
        d.order(java.nio.ByteOrder.BIG_ENDIAN).putLong(DeviceAttributes.NODE_GUID_OFFSET, 0x5cd4c6fffe62be40L)
                .order(java.nio.ByteOrder.nativeOrder());
        d.putInt(DeviceAttributes.MAX_QP_OFFSET, 1048560);
        d.put(DeviceAttributes.PHYS_PORT_CNT_OFFSET, (byte) 1);
        d.putInt(DeviceAttributes.DEVICE_CAP_FLAGS_OFFSET, DeviceAttributes.CAP_MEM_WINDOW | DeviceAttributes.CAP_SRQ_RESIZE);
        DeviceAttributes dev = DeviceAttributes.read(d, 0);
        assertEquals("1.2.3", dev.firmwareVersion());
        assertEquals(0x5cd4c6fffe62be40L, dev.nodeGuid(), "__be64 GUID converted to host order");
        assertEquals("5cd4:c6ff:fe62:be40", VerbsDevice.formatGuid(dev.nodeGuid()));
        assertEquals(1048560, dev.maxQp());
        assertEquals(1, dev.physPortCount());
        assertTrue(dev.has(DeviceAttributes.CAP_MEM_WINDOW));
        assertTrue(!dev.has(DeviceAttributes.CAP_MEM_WINDOW_TYPE_2B));
        assertNull(Mtu.of(0));
    }

    /** byte_len is a u32: rxe's max_msg_sz is 2^31, so a transfer of 2 GiB must not read as a negative length. */
    @Test
    void workCompletionByteLenIsUnsigned() {
        WorkCompletions w = new WorkCompletions(1);
        w.buffer().putInt(WorkCompletions.BYTE_LEN_OFFSET, 0x8000_0000);
        w.count(1);
        assertEquals(1L << 31, w.byteLen(0));
        w.buffer().putInt(WorkCompletions.BYTE_LEN_OFFSET, -1);
        assertEquals(0xFFFF_FFFFL, w.byteLen(0));
    }
}
