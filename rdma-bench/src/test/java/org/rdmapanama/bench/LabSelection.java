package org.rdmapanama.bench;

import org.rdmapanama.device.GidType;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.LabDevices;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What rdma-bench's lab tests need of a {@link LabDevices} selection beyond the device: its address, a RoCEv2 GID. */
public final class LabSelection {
    private LabSelection() {}

    /** The address rdma_cm (and the TCP exchange) reaches the selected device by. */
    public static String address(Selection s) {
        try {
            return s.ipAddress().getHostAddress();
        } catch (NoSuchDeviceException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    /** The RoCEv2 selection; a native tool is given its GID index (-g), which must be a RoCEv2 GID. */
    public static Selection roceV2Gid() throws RdmaException {
        Selection s = LabDevices.select(Transport.ROCE_V2);
        assertEquals(GidType.ROCE_V2, s.gid().type(), s.gid().toString());
        return s;
    }
}
