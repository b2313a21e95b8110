package org.rdmapanama.verbs;

import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.NativeHeap;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.testkit.FaultRig.CmPair;

import java.io.IOException;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connect, write, disconnect, close, many times on each device: the kernel's
 * object counts return to where they were and after a warm-up the process
 * holds no more FFM arena memory, mappings or file descriptors (see {@link NativeHeap};
 * RSS is printed, not checked: it follows the Java heap's sizing). (The long run with NMT figures is
 * {@code rdma-bench scale cycles}.)
 */
@Tag("device")
class LeakConnectSoakDeviceTest {
    static final int CYCLES = Integer.getInteger("rdma.soak.cycles", 230);
    static final int WARMUP = 30;

    static long[] footprint() throws IOException {
        System.gc();
        return new long[] {NativeHeap.arenaKb(), NativeHeap.mappings(), NativeHeap.rssKb(), NativeHeap.openFds(), watcherThreads()};
    }

    /** Event watcher threads alive: librdmacm's context is the same for every connection, so is its watcher. */
    static long watcherThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("rdma-async-events-")).count();
    }

    @OnEveryLabTransport
    void connectDisconnectCyclesLeakNothing(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        Map<String, Integer> before = LeakCheck.counts();
        long[] first = footprint(), warm = null;
        long start = System.nanoTime();
        try (CompletionBatch batch = new CompletionBatch(1)) {
            for (int i = 0; i < CYCLES; i++) {
                try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), 4096);
                     SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
                    FaultRig.fill(p.clientMr(), 0, 64, i);
                    p.client().queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, 64)
                            .remote(p.atServer().address(), p.atServer().rkey()));
                    assertEquals(1, p.client().completionQueue().pollUntil(batch, FaultRig.T));
                    batch.requireSuccess(0);
                    assertTrue(FaultRig.awaitMatch(p.serverMr(), 0, 64, i), "cycle " + i);
                }
                if (i == WARMUP - 1) {
                    warm = footprint();
                }
            }
        }
        long[] end = footprint();
        Map<String, Integer> after = LeakCheck.counts();
        double perCycleMs = (System.nanoTime() - start) / 1e6 / CYCLES;
        int measured = CYCLES - WARMUP;
        long arenaGrowth = end[0] - warm[0], mapGrowth = end[1] - warm[1], fdGrowth = end[3] - warm[3], threadGrowth = end[4] - warm[4];
        System.out.printf("LEAK-SOAK %s: %d connect/write/disconnect cycles, %.1f ms each; over the %d after a warm-up: "
                        + "FFM arenas (NMT Other) %+d kB, mappings %+d, fds %+d, watcher threads %d, RSS %+d kB (start %d kB, warm %d kB, end %d kB); "
                        + "rdma res before %s after %s%n",
                device, CYCLES, perCycleMs, measured, arenaGrowth, mapGrowth, fdGrowth, end[4], end[2] - warm[2], first[2], warm[2],
                end[2], before, after);
        assertEquals(before, after, "kernel RDMA objects after " + CYCLES + " cycles");
        // A connection's arenas (work requests, completion batches, private data) hold kilobytes: a leak of
        // 128 bytes a cycle shows. The 64 kB are NMT's own noise (JDK-internal "Other" users).
        assertTrue(arenaGrowth < 64 + measured / 8,
                "FFM arena memory grew " + arenaGrowth + " kB over " + measured + " cycles");
        assertEquals(0, threadGrowth, "async event watcher threads grew by " + threadGrowth);
        assertTrue(fdGrowth <= 2, "open file descriptors grew by " + fdGrowth + " over " + measured + " cycles");
        assertTrue(mapGrowth < 8, "memory mappings grew by " + mapGrowth + " over " + measured + " cycles");
    }
}
