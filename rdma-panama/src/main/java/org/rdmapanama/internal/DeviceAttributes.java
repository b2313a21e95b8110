package org.rdmapanama.internal;

import org.rdmapanama.ffi.ibv_device_attr;
import org.rdmapanama.ffi.ibv_port_attr;

import java.lang.foreign.MemorySegment;

/** The fields of {@code struct ibv_device_attr} and {@code ibv_port_attr} that the device layer reports. */
public final class DeviceAttributes {
    private DeviceAttributes() {}

    // --- struct ibv_device_attr ---

    public static String firmwareVersion(MemorySegment a) {
        return ibv_device_attr.fw_ver(a).getString(0);
    }

    public static int vendorId(MemorySegment a) {
        return ibv_device_attr.vendor_id(a);
    }

    public static int vendorPartId(MemorySegment a) {
        return ibv_device_attr.vendor_part_id(a);
    }

    public static int hardwareVersion(MemorySegment a) {
        return ibv_device_attr.hw_ver(a);
    }

    public static long maxMrSize(MemorySegment a) {
        return ibv_device_attr.max_mr_size(a);
    }

    public static int maxQp(MemorySegment a) {
        return ibv_device_attr.max_qp(a);
    }

    public static int maxQpWr(MemorySegment a) {
        return ibv_device_attr.max_qp_wr(a);
    }

    public static int maxSge(MemorySegment a) {
        return ibv_device_attr.max_sge(a);
    }

    public static int maxSgeRd(MemorySegment a) {
        return ibv_device_attr.max_sge_rd(a);
    }

    public static int maxCq(MemorySegment a) {
        return ibv_device_attr.max_cq(a);
    }

    public static int maxCqe(MemorySegment a) {
        return ibv_device_attr.max_cqe(a);
    }

    public static int maxMr(MemorySegment a) {
        return ibv_device_attr.max_mr(a);
    }

    public static int maxPd(MemorySegment a) {
        return ibv_device_attr.max_pd(a);
    }

    public static int maxQpRdAtom(MemorySegment a) {
        return ibv_device_attr.max_qp_rd_atom(a);
    }

    public static int maxQpInitRdAtom(MemorySegment a) {
        return ibv_device_attr.max_qp_init_rd_atom(a);
    }

    /** An {@code enum ibv_atomic_cap}. */
    public static int atomicCap(MemorySegment a) {
        return ibv_device_attr.atomic_cap(a);
    }

    public static int maxSrq(MemorySegment a) {
        return ibv_device_attr.max_srq(a);
    }

    public static int maxSrqWr(MemorySegment a) {
        return ibv_device_attr.max_srq_wr(a);
    }

    public static int maxSrqSge(MemorySegment a) {
        return ibv_device_attr.max_srq_sge(a);
    }

    public static int maxAh(MemorySegment a) {
        return ibv_device_attr.max_ah(a);
    }

    public static int physPortCount(MemorySegment a) {
        return Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(a));
    }

    // --- struct ibv_port_attr ---

    /** An {@code enum ibv_port_state}. */
    public static int portState(MemorySegment a) {
        return ibv_port_attr.state(a);
    }

    public static int lid(MemorySegment a) {
        return Short.toUnsignedInt(ibv_port_attr.lid(a));
    }

    /** An {@code enum ibv_mtu}. */
    public static int activeMtu(MemorySegment a) {
        return ibv_port_attr.active_mtu(a);
    }

    /** An {@code enum ibv_mtu}. */
    public static int maxMtu(MemorySegment a) {
        return ibv_port_attr.max_mtu(a);
    }

    public static int gidTableLength(MemorySegment a) {
        return ibv_port_attr.gid_tbl_len(a);
    }

    /** {@code IBV_LINK_LAYER_*}. */
    public static int linkLayer(MemorySegment a) {
        return ibv_port_attr.link_layer(a);
    }
}
