package org.rdmapanama;

import org.rdmapanama.device.Transport;
import org.rdmapanama.device.Selection;
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
 * counts that LeakFinalTest compares against. A parser that matched nothing
 * (a changed {@code rdma res show} format) would count 0 before and after and
 * pass blind; so one PD, CQ, QP, MR and rdma_cm id are made on each lab
 * transport, each must show as exactly one more, and closing them must bring
 * the counts back.
 */
@Tag("device")
@Order(Integer.MIN_VALUE)
class LeakBaselineTest {
    static final Map<String, Integer> ONE_OF_EACH = Map.of("pd", 1, "cq", 1, "qp", 1, "mr", 1, "cm_id", 1, "srq", 0);

    @Test
    void theLeakCheckSeesEveryObjectKindThenRecordsTheBaseline() throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        for (Transport t : LabDevices.TRANSPORTS) {
            Selection s = LabDevices.select(t);
            try (DeviceContext ctx = LabDevices.open(t);
                 RdmaListener listener = RdmaListener.bind(new InetSocketAddress(s.ipAddress(), FaultRig.nextPort()), 1,
                         ConnectionOptions.defaults())) {
                ProtectionDomain pd = ctx.allocateProtectionDomain();
                CompletionQueue cq = ctx.createCompletionQueue(16);
                pd.createQueuePair(QueuePairConfig.rc(cq));
                pd.allocate(4096);
                Map<String, Integer> expected = new TreeMap<>(before);
                ONE_OF_EACH.forEach((kind, n) -> expected.merge(kind, n, Integer::sum));
                assertEquals(expected, LeakCheck.counts(), "rdma res show with one of each open on " + s.device().name());
            }
            assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after closing them on " + s.device().name());
        }
        LeakCheck.baseline = before;
        System.out.println("leak check baseline (rdma res show): " + LeakCheck.baseline);
    }
}
