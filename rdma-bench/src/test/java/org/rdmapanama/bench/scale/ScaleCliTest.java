package org.rdmapanama.bench.scale;

import org.rdmapanama.bench.BenchRun;
import org.rdmapanama.bench.Main;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** scale's command line through Main: usage errors exit 2 and name the flag. */
class ScaleCliTest {
    private static String error(Runnable parse) {
        return assertThrows(IllegalArgumentException.class, parse::run).getMessage();
    }

    @Test
    void scaleUsageErrorsExit2AndNameTheFlag() {
        BenchRun r = BenchRun.of("scale", "client", "-a");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("rdma-bench scale: option -a needs a value"), r.err());
        r = BenchRun.of("scale", "client", "-a", "10.77.0.1", "-c", "0");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("rdma-bench scale: option -c must be 1..1000000, got 0"), r.err());
        r = BenchRun.of("scale", "sideways", "-a", "10.77.0.1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("unknown mode 'sideways'"), r.err());
        r = BenchRun.of("scale", "client");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("-a ADDR is required"), r.err());
        assertEquals(2, BenchRun.of("scale").status());
        r = BenchRun.of("scale", "-h");
        assertEquals(0, r.status());
        assertTrue(r.out().startsWith("usage: rdma-bench scale"), r.out());
    }
}
