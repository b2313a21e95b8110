package org.rdmapanama.verbs;

import org.rdmapanama.testkit.LeakCheck;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs last among the device tests, in the same JVM: every PD, MR, CQ, QP
 * and cm_id the suite made has been freed, so the kernel's counts are back
 * at the baseline.
 */
@Tag("device")
@Order(Integer.MAX_VALUE)
class LeakFinalDeviceTest {
    @Test
    void kernelObjectCountsAreBackToTheBaseline() throws Exception {
        assumeTrue(LeakCheck.baseline != null, "the baseline did not run first");
        Map<String, Integer> now = LeakCheck.awaitCounts(LeakCheck.baseline);
        System.out.println("leak check after the suite (rdma res show): " + now + " (baseline " + LeakCheck.baseline + ")");
        assertEquals(LeakCheck.baseline, now, "kernel RDMA objects left over after the suite");
    }
}
