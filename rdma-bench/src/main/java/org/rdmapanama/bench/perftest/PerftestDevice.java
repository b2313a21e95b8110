package org.rdmapanama.bench.perftest;

import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.DeviceContext;

import java.util.ArrayList;
import java.util.List;

/** What a perftest run asks of its device: atomics for atomic_lat, the peer's access, the outstanding reads. */
final class PerftestDevice {
    private PerftestDevice() {}

    /** atomic_lat is refused, before anything is sent, on a device without atomics. */
    static void check(PerftestOptions.Test test, DeviceContext c) {
        if (test.verb == PerftestOptions.Verb.ATOMIC && c.capabilities().atomicCap() == AtomicCapability.NONE) {
            throw new TransportCapabilityException("atomic_lat refused: " + c.device().name() + " ("
                    + c.transport().displayName() + ") reports atomic_cap NONE");
        }
    }

    /** The peer writes and reads the region, and uses atomics on it where the device has them. */
    static Access[] remoteAccess(DeviceContext c) {
        List<Access> access = new ArrayList<>(List.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        if (c.capabilities().atomicCap() != AtomicCapability.NONE) {
            access.add(Access.REMOTE_ATOMIC);
        }
        return access.toArray(Access[]::new);
    }

    /**
     * The outstanding RDMA Reads and atomics of a QP: perftest's default, the device's {@code max_qp_rd_atom},
     * bounded by what it may initiate and, with several candidate devices (rdma_cm picks one only when it
     * resolves), by each; at least 1 and at most 255, rdma_conn_param's 8-bit limit.
     */
    static int outstandingReads(List<DeviceCapabilities> devices) {
        int rd = 255;
        for (DeviceCapabilities c : devices) {
            rd = Math.min(rd, Math.min(c.maxQpRdAtom(), c.maxQpInitRdAtom()));
        }
        return Math.max(1, rd);
    }
}
