package org.rdmapanama.bench;

import org.rdmapanama.device.GidType;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The lab device for a transport, picked by the runtime's {@link Selection}
 * (the device name is only ever its answer), with the same overrides as
 * rdma-panama's test helper LabDevices: {@code RDMA_TEST_ROCE_DEVICE},
 * {@code RDMA_TEST_IWARP_DEVICE}. Without a device for the transport the
 * test skips; an override that names a device without it fails.
 */
public final class LabSelection {
    private LabSelection() {}

    public static Optional<String> override(Transport t) {
        return Optional.ofNullable(System.getenv(t == Transport.IWARP ? "RDMA_TEST_IWARP_DEVICE" : "RDMA_TEST_ROCE_DEVICE"));
    }

    public static Selection select(Transport t) {
        try {
            return Selection.select(RdmaConfig.any().withTransport(t.name()).withDevice(override(t).orElse(null)),
                    RdmaDevices.list());
        } catch (NoSuchDeviceException e) {
            if (override(t).isPresent()) {
                throw new AssertionError("the device named for " + t + " does not have it: " + e.getMessage(), e);
            }
            assumeTrue(false, e.getMessage());
            throw new AssertionError(e);
        } catch (RdmaException e) {
            throw new AssertionError("listing the RDMA devices failed: " + e.getMessage(), e);
        }
    }

    /** The address rdma_cm (and the TCP exchange) reaches the selected device by. */
    public static String address(Selection s) {
        try {
            return s.ipAddress().getHostAddress();
        } catch (NoSuchDeviceException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    /** The RoCEv2 selection; the native tool is given its GID index (-g), which must be a RoCEv2 GID. */
    public static Selection roceV2Gid() {
        Selection s = select(Transport.ROCE_V2);
        assertEquals(GidType.ROCE_V2, s.gid().type(), s.gid().toString());
        return s;
    }
}
