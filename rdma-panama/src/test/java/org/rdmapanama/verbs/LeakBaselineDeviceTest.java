package org.rdmapanama.verbs;

import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaListener;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Runs first among the device tests (see junit-platform.properties): proves
 * that the leak check can see a leak, then records the kernel's RDMA object
 * counts that LeakFinalDeviceTest compares against. A parser that matched nothing
 * (a changed {@code rdma res show} format) would count 0 before and after and
 * pass blind; so on each lab transport a PD, CQ, QP and MR, then an rdma_cm
 * listener, are made: each must show in the counts, and closing them must
 * bring the counts back.
 */
@Tag("device")
@Order(Integer.MIN_VALUE)
class LeakBaselineDeviceTest {
    static Map<String, Integer> plus(Map<String, Integer> base, Map<String, Integer> more) {
        Map<String, Integer> sum = new TreeMap<>(base);
        more.forEach((kind, n) -> sum.merge(kind, n, Integer::sum));
        return sum;
    }

    @Test
    void theLeakCheckSeesEveryObjectKindThenRecordsTheBaseline() throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        for (Transport t : LabDevices.TRANSPORTS) {
            Selection s = LabDevices.select(t);
            String device = s.device().name();
            try (DeviceContext ctx = LabDevices.open(t)) {
                ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(16);
                pd.createQueuePair(QueuePairConfig.rc(cq));
                pd.allocate(4096);
                assertEquals(plus(before, Map.of("pd", 1, "cq", 1, "qp", 1, "mr", 1)), LeakCheck.counts(),
                        "rdma res show with a PD, CQ, QP and MR open on " + device);
            }
            assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after closing them on " + device);
            try (RdmaListener listener = RdmaListener.bind(new InetSocketAddress(s.ipAddress(), LabPorts.next()), 1,
                    ConnectionOptions.defaults())) {
                // librdmacm allocates a PD of its own on a device while any cm_id uses it.
                assertEquals(plus(before, Map.of("cm_id", 1, "pd", 1)), LeakCheck.counts(),
                        "rdma res show with an rdma_cm listener on " + listener.address() + " (" + device + ")");
            }
            assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after closing the listener on " + device);
        }
        LeakCheck.baseline = before;
        System.out.println("leak check baseline (rdma res show): " + LeakCheck.baseline);
    }
}
