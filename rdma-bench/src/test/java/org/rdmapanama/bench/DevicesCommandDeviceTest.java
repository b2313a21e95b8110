package org.rdmapanama.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code rdma-bench devices} on the lab's rxe0 and siw0. */
@Tag("device")
class DevicesCommandDeviceTest {
    @Test
    void listsBothLabDevicesWithTransportsAndGids() {
        assumeTrue("1".equals(System.getenv("RDMA_LAB")), "only in the soft-RDMA lab");
        MainTest.Result r = MainTest.run("devices");
        assertEquals(0, r.status(), r.err());
        String out = r.out();
        assertTrue(out.contains("rxe0  transport RoCEv2"), out);
        assertTrue(out.contains("siw0  transport iWARP"), out);
        assertTrue(out.matches("(?s).*port 1 +ACTIVE, link_layer Ethernet, transport RoCEv2.*"), out);
        assertTrue(out.contains("::ffff:" + System.getenv("RDMA_LAB_ADDR")), out);
        assertTrue(out.contains("RoCEv2"), out);
    }
}
