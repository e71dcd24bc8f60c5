package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * An address vector: where a UD send goes ({@link ProtectionDomain#createAddressHandle}) or the remote end of
 * a connected QP ({@link QpAttributes#addressVector}). On RoCE the vector must be global: set it with
 * {@link #global(Gid, int)} (the remote GID and the index of the local RoCEv2 GID to send from).
 * A mutable builder; setters validate their argument and return {@code this}.
 * <pre>
 * struct ibv_global_route {
 *     union ibv_gid dgid;
 *     uint32_t      flow_label;
 *     uint8_t       sgid_index;
 *     uint8_t       hop_limit;
 *     uint8_t       traffic_class;
 * };
 * struct ibv_ah_attr {
 *     struct ibv_global_route grh;
 *     uint16_t dlid;
 *     uint8_t  sl;
 *     uint8_t  src_path_bits;
 *     uint8_t  static_rate;
 *     uint8_t  is_global;
 *     uint8_t  port_num;
 * };
 * </pre>
 */
@NativeStruct(value = "struct ibv_ah_attr", header = "infiniband/verbs.h")
public final class AddressHandleAttributes {
    public static final int SIZE = 32;
    @NativeField("grh.dgid")
    public static final int GRH_DGID_OFFSET = 0;
    @NativeField("grh.flow_label")
    public static final int GRH_FLOW_LABEL_OFFSET = 16;
    @NativeField("grh.sgid_index")
    public static final int GRH_SGID_INDEX_OFFSET = 20;
    @NativeField("grh.hop_limit")
    public static final int GRH_HOP_LIMIT_OFFSET = 21;
    @NativeField("grh.traffic_class")
    public static final int GRH_TRAFFIC_CLASS_OFFSET = 22;
    @NativeField("dlid")
    public static final int DLID_OFFSET = 24;
    @NativeField("sl")
    public static final int SL_OFFSET = 26;
    @NativeField("src_path_bits")
    public static final int SRC_PATH_BITS_OFFSET = 27;
    @NativeField("static_rate")
    public static final int STATIC_RATE_OFFSET = 28;
    @NativeField("is_global")
    public static final int IS_GLOBAL_OFFSET = 29;
    @NativeField("port_num")
    public static final int PORT_NUM_OFFSET = 30;

    private Gid dgid = Gid.ZERO;
    private int flowLabel;
    private int sgidIndex;
    private int hopLimit = 64;
    private int trafficClass;
    private int dlid;
    private int sl;
    private int srcPathBits;
    private int staticRate;
    private boolean global;
    private int portNum = 1;

    /** Port 1, not global, everything else 0 (hop limit 64 once global). */
    public AddressHandleAttributes() {
    }

    /** A copy. */
    public AddressHandleAttributes copy() {
        AddressHandleAttributes c = new AddressHandleAttributes();
        c.dgid = dgid;
        c.flowLabel = flowLabel;
        c.sgidIndex = sgidIndex;
        c.hopLimit = hopLimit;
        c.trafficClass = trafficClass;
        c.dlid = dlid;
        c.sl = sl;
        c.srcPathBits = srcPathBits;
        c.staticRate = staticRate;
        c.global = global;
        c.portNum = portNum;
        return c;
    }

    /** Makes the vector global (needed on RoCE): destination GID and index of the local source GID. */
    public AddressHandleAttributes global(Gid dgid, int sgidIndex) {
        this.dgid = Objects.requireNonNull(dgid, "dgid");
        this.sgidIndex = range("sgidIndex", sgidIndex, 0, 255);
        this.global = true;
        return this;
    }

    public AddressHandleAttributes dgid(Gid dgid) {
        this.dgid = Objects.requireNonNull(dgid, "dgid");
        return this;
    }

    public AddressHandleAttributes isGlobal(boolean global) {
        this.global = global;
        return this;
    }

    public AddressHandleAttributes sgidIndex(int sgidIndex) {
        this.sgidIndex = range("sgidIndex", sgidIndex, 0, 255);
        return this;
    }

    public AddressHandleAttributes hopLimit(int hopLimit) {
        this.hopLimit = range("hopLimit", hopLimit, 0, 255);
        return this;
    }

    public AddressHandleAttributes trafficClass(int trafficClass) {
        this.trafficClass = range("trafficClass", trafficClass, 0, 255);
        return this;
    }

    public AddressHandleAttributes flowLabel(int flowLabel) {
        this.flowLabel = range("flowLabel", flowLabel, 0, 0xfffff);
        return this;
    }

    /** Destination LID (InfiniBand; ignored on RoCE). */
    public AddressHandleAttributes dlid(int dlid) {
        this.dlid = range("dlid", dlid, 0, 0xffff);
        return this;
    }

    public AddressHandleAttributes serviceLevel(int sl) {
        this.sl = range("sl", sl, 0, 15);
        return this;
    }

    public AddressHandleAttributes srcPathBits(int srcPathBits) {
        this.srcPathBits = range("srcPathBits", srcPathBits, 0, 127);
        return this;
    }

    /** {@code enum ibv_rate}; 0 = the port's rate. */
    public AddressHandleAttributes staticRate(int staticRate) {
        this.staticRate = range("staticRate", staticRate, 0, 255);
        return this;
    }

    /** The local port (from 1). */
    public AddressHandleAttributes portNum(int portNum) {
        this.portNum = range("portNum", portNum, 1, 255);
        return this;
    }

    public Gid dgid() {
        return dgid;
    }

    public boolean isGlobal() {
        return global;
    }

    public int sgidIndex() {
        return sgidIndex;
    }

    public int hopLimit() {
        return hopLimit;
    }

    public int trafficClass() {
        return trafficClass;
    }

    public int flowLabel() {
        return flowLabel;
    }

    public int dlid() {
        return dlid;
    }

    public int serviceLevel() {
        return sl;
    }

    public int srcPathBits() {
        return srcPathBits;
    }

    public int staticRate() {
        return staticRate;
    }

    public int portNum() {
        return portNum;
    }

    /** Writes a {@code struct ibv_ah_attr} at {@code offset} (all 32 bytes). */
    public void writeTo(ByteBuffer b, int offset) {
        Objects.requireNonNull(b, "buffer");
        Buffers.zero(b, offset, SIZE);
        dgid.write(b, offset + GRH_DGID_OFFSET);
        b.putInt(offset + GRH_FLOW_LABEL_OFFSET, flowLabel);
        b.put(offset + GRH_SGID_INDEX_OFFSET, (byte) sgidIndex);
        b.put(offset + GRH_HOP_LIMIT_OFFSET, (byte) hopLimit);
        b.put(offset + GRH_TRAFFIC_CLASS_OFFSET, (byte) trafficClass);
        b.putShort(offset + DLID_OFFSET, (short) dlid);
        b.put(offset + SL_OFFSET, (byte) sl);
        b.put(offset + SRC_PATH_BITS_OFFSET, (byte) srcPathBits);
        b.put(offset + STATIC_RATE_OFFSET, (byte) staticRate);
        b.put(offset + IS_GLOBAL_OFFSET, (byte) (global ? 1 : 0));
        b.put(offset + PORT_NUM_OFFSET, (byte) portNum);
    }

    /** Reads a {@code struct ibv_ah_attr} at {@code offset}. Port 0 (as a query may return) reads as 1. */
    public static AddressHandleAttributes read(ByteBuffer b, int offset) {
        AddressHandleAttributes a = new AddressHandleAttributes();
        a.dgid = Gid.read(b, offset + GRH_DGID_OFFSET);
        a.flowLabel = b.getInt(offset + GRH_FLOW_LABEL_OFFSET);
        a.sgidIndex = b.get(offset + GRH_SGID_INDEX_OFFSET) & 0xff;
        a.hopLimit = b.get(offset + GRH_HOP_LIMIT_OFFSET) & 0xff;
        a.trafficClass = b.get(offset + GRH_TRAFFIC_CLASS_OFFSET) & 0xff;
        a.dlid = Short.toUnsignedInt(b.getShort(offset + DLID_OFFSET));
        a.sl = b.get(offset + SL_OFFSET) & 0xff;
        a.srcPathBits = b.get(offset + SRC_PATH_BITS_OFFSET) & 0xff;
        a.staticRate = b.get(offset + STATIC_RATE_OFFSET) & 0xff;
        a.global = b.get(offset + IS_GLOBAL_OFFSET) != 0;
        int port = b.get(offset + PORT_NUM_OFFSET) & 0xff;
        a.portNum = port == 0 ? 1 : port;
        return a;
    }

    static int range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    @Override
    public String toString() {
        return "AddressHandleAttributes{port=" + portNum + (global ? ", dgid=" + dgid + ", sgid_index=" + sgidIndex
                + ", hop_limit=" + hopLimit + ", traffic_class=" + trafficClass + ", flow_label=" + flowLabel : ", not global")
                + ", dlid=" + dlid + ", sl=" + sl + ", static_rate=" + staticRate + "}";
    }
}
