package org.rdmapanama;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Runs first among the device tests (see junit-platform.properties): records the kernel's RDMA object counts. */
@Tag("device")
@Order(Integer.MIN_VALUE)
class LeakBaselineTest {
    @Test
    void recordBaseline() throws Exception {
        LeakCheck.baseline = LeakCheck.counts();
        System.out.println("leak check baseline (rdma res show): " + LeakCheck.baseline);
    }
}
