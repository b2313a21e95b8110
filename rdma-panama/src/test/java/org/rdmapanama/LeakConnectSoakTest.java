package org.rdmapanama;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdmapanama.FaultRig.CmPair;
import org.rdmapanama.cm.ConnectionOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connect, write, disconnect, close, many times on each device: the kernel's
 * object counts return to where they were and the process's resident memory
 * stays flat after a warm-up. (The long run with NMT figures is
 * {@code rdma-bench scale cycles}.)
 */
@Tag("device")
class LeakConnectSoakTest {
    static final int CYCLES = Integer.getInteger("rdma.soak.cycles", 150);
    static final int WARMUP = 30;

    static long rssKb() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        throw new IOException("no VmRSS in /proc/self/status");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rxe0", "siw0"})
    void connectDisconnectCyclesLeakNothing(String device) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        long rssStart = rssKb(), rssWarm = 0;
        long start = System.nanoTime(), warmAt = 0;
        try (CompletionBatch batch = new CompletionBatch(1)) {
            for (int i = 0; i < CYCLES; i++) {
                try (CmPair p = FaultRig.cmPair(device, ConnectionOptions.defaults(), 4096);
                     SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
                    FaultRig.fill(p.clientMr(), 0, 64, i);
                    p.client().queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, 64)
                            .remote(p.atServer().address(), p.atServer().rkey()));
                    assertEquals(1, p.client().completionQueue().pollUntil(batch, FaultRig.T));
                    batch.requireSuccess(0);
                    assertTrue(FaultRig.matches(p.serverMr(), 0, 64, i), "cycle " + i);
                }
                if (i == WARMUP - 1) {
                    System.gc();
                    rssWarm = rssKb();
                    warmAt = System.nanoTime();
                }
            }
        }
        System.gc();
        long rssEnd = rssKb();
        Map<String, Integer> after = LeakCheck.counts();
        double perCycleMs = (System.nanoTime() - start) / 1e6 / CYCLES;
        System.out.printf("LEAK-SOAK %s: %d connect/write/disconnect cycles, %.1f ms each; RSS start %d kB, after %d "
                        + "warm-up cycles %d kB, end %d kB (%+d kB over %d cycles after warm-up); rdma res before %s after %s%n",
                device, CYCLES, perCycleMs, rssStart, WARMUP, rssWarm, rssEnd, rssEnd - rssWarm, CYCLES - WARMUP,
                before, after);
        assertEquals(before, after, "kernel RDMA objects after " + CYCLES + " cycles");
        // Flat: under 16 KiB per cycle after warm-up would still be generous; a real leak of a CQ or QP buffer is more.
        assertTrue(rssEnd - rssWarm < 16L * (CYCLES - WARMUP) + 8192,
                "RSS grew " + (rssEnd - rssWarm) + " kB over " + (CYCLES - WARMUP) + " cycles");
    }
}
