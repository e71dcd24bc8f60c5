package io.reactiverdma.cm;

import io.reactiverdma.verbs.AddressHandleAttributes;

import java.nio.ByteBuffer;

/**
 * One rdma_cm event, copied out of librdmacm's {@code struct rdma_cm_event} and already acknowledged
 * ({@code rdma_ack_cm_event}), so it stays valid for as long as the caller keeps it and never blocks
 * {@code rdma_destroy_id}.
 *
 * @param type               what happened
 * @param status             the event's status: 0, a negative errno (ADDR_ERROR, ROUTE_ERROR,
 *                           CONNECT_ERROR, UNREACHABLE ...) or, for REJECTED, the CM's reject reason
 *                           (for example 8 "invalid service ID" when nobody listens, 28 "consumer reject")
 * @param id                 the id the event is for; for CONNECT_REQUEST a new id, owned by the caller
 *                           (accept, reject or close it)
 * @param listenId           for CONNECT_REQUEST, the listening id; else null
 * @param privateData        the peer's private data (connect request, accept, reject), possibly padded by
 *                           the CM to its fixed size; empty when none
 * @param responderResources conn param of a CONNECT_REQUEST/ESTABLISHED on RDMA_PS_TCP
 * @param initiatorDepth     conn param
 * @param remoteQpNum        the peer's QP number (conn param qp_num, or ud param qp_num)
 * @param qkey               ud param Q_Key (RDMA_PS_UDP and multicast events), else 0
 * @param ahAttr             ud param address handle attributes (RDMA_PS_UDP), else null
 */
public record CmEvent(CmEventType type, int status, RdmaCmId id, RdmaCmId listenId, byte[] privateData,
                      int responderResources, int initiatorDepth, int remoteQpNum, int qkey,
                      AddressHandleAttributes ahAttr) {

    static CmEvent read(ByteBuffer e, RdmaCmId id, RdmaCmId listenId, boolean ud) {
        CmEventType type = CmEventType.of(e.getInt(CmStructs.CmEventLayout.EVENT_OFFSET));
        int status = e.getInt(CmStructs.CmEventLayout.STATUS_OFFSET);
        if (ud) {
            int p = CmStructs.CmEventLayout.PARAM_UD_OFFSET;
            byte[] data = NativeMemory.copy(e.getLong(p + CmStructs.UdParamLayout.PRIVATE_DATA_OFFSET),
                    Byte.toUnsignedInt(e.get(p + CmStructs.UdParamLayout.PRIVATE_DATA_LEN_OFFSET)));
            AddressHandleAttributes ah = AddressHandleAttributes.read(e, p + CmStructs.UdParamLayout.AH_ATTR_OFFSET);
            return new CmEvent(type, status, id, listenId, data, 0, 0,
                    e.getInt(p + CmStructs.UdParamLayout.QP_NUM_OFFSET), e.getInt(p + CmStructs.UdParamLayout.QKEY_OFFSET),
                    ah);
        }
        int p = CmStructs.CmEventLayout.PARAM_CONN_OFFSET;
        byte[] data = NativeMemory.copy(e.getLong(p + CmStructs.ConnParamLayout.PRIVATE_DATA_OFFSET),
                Byte.toUnsignedInt(e.get(p + CmStructs.ConnParamLayout.PRIVATE_DATA_LEN_OFFSET)));
        return new CmEvent(type, status, id, listenId, data,
                Byte.toUnsignedInt(e.get(p + CmStructs.ConnParamLayout.RESPONDER_RESOURCES_OFFSET)),
                Byte.toUnsignedInt(e.get(p + CmStructs.ConnParamLayout.INITIATOR_DEPTH_OFFSET)),
                e.getInt(p + CmStructs.ConnParamLayout.QP_NUM_OFFSET), 0, null);
    }

    /** The private data without the CM's zero padding at its end. */
    public byte[] privateDataTrimmed() {
        int n = privateData.length;
        while (n > 0 && privateData[n - 1] == 0) {
            n--;
        }
        return java.util.Arrays.copyOf(privateData, n);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public String toString() {
        return "CmEvent{" + type + ", status=" + status + ", id=" + id
                + (listenId != null ? ", listenId=" + listenId : "")
                + (privateData.length > 0 ? ", privateData=" + privateData.length + " bytes" : "") + "}";
    }
}
