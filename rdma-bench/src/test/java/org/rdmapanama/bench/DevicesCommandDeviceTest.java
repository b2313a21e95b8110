package org.rdmapanama.bench;

import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;

import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code rdma-bench devices} lists the device selection picks for each lab transport, with that transport. */
@Tag("device")
class DevicesCommandDeviceTest {
    @Test
    void listsBothLabDevicesWithTransportsAndGids() throws Exception {
        assumeTrue("1".equals(System.getenv("RDMA_LAB")), "only in the soft-RDMA lab");
        BenchRun r = BenchRun.of("devices");
        assertEquals(0, r.status(), r.err());
        String out = r.out();
        for (Transport t : new Transport[] {Transport.ROCE_V2, Transport.IWARP}) {
            Selection s = LabDevices.select(t);
            assertTrue(out.contains(s.device().name() + "  transport " + t.displayName()), out);
        }
        assertTrue(out.matches("(?s).*port 1 +ACTIVE, link_layer Ethernet, transport RoCEv2.*"), out);
        // RoCEv2 has a RoCEv2 GID: the one selection picks is listed with its type.
        Selection roce = LabDevices.select(Transport.ROCE_V2);
        assertTrue(Pattern.compile("(?m)^\\s+gid\\[" + roce.gidIndex() + "\\]\\s+" + roce.gid().hex() + "\\s.*\\s"
                + GidType.ROCE_V2 + "$").matcher(out).find(), out);
        assertTrue(out.contains("::ffff:" + LabSelection.address(roce)), out);
    }
}
