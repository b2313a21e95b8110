package org.rdmapanama.device;

/**
 * The limits of a device, from {@code ibv_query_device}. Transport
 * differences (no atomics on iWARP, one SGE for RDMA Read on siw) are read
 * from here, never assumed from a device's name.
 */
public record DeviceCapabilities(
        String firmwareVersion,
        int vendorId,
        int vendorPartId,
        int hardwareVersion,
        long maxMrSize,
        int maxQp,
        int maxQpWr,
        int maxSge,
        int maxSgeRd,
        int maxCq,
        int maxCqe,
        int maxMr,
        int maxPd,
        int maxQpRdAtom,
        int maxQpInitRdAtom,
        AtomicCapability atomicCap,
        int maxSrq,
        int maxSrqWr,
        int maxSrqSge,
        int maxAh,
        int physPortCount) {

    /** Compare&amp;Swap and Fetch&amp;Add: {@code atomic_cap} is not {@code IBV_ATOMIC_NONE} (it is on iWARP). */
    public boolean supportsAtomics() {
        return atomicCap != AtomicCapability.NONE;
    }

    /** Whether one RDMA Read may gather into {@code sges} SGEs ({@code max_sge_rd}; siw allows 1). */
    public boolean allowsReadSges(int sges) {
        return sges <= maxSgeRd;
    }
}
