package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class MainTest {
    @Test
    void withoutDevicesSaysSoInOneLineAndExits2() {
        assumeFalse(Files.isDirectory(Path.of("/sys/class/infiniband")), "this machine has RDMA support");
        BenchRun r = BenchRun.of("devices");
        assertEquals(2, r.status());
        assertEquals("", r.out());
        String[] lines = r.err().strip().split("\n");
        assertEquals(1, lines.length, r.err());
        assertTrue(lines[0].startsWith("rdma-bench devices: no RDMA devices found"), lines[0]);
        assertTrue(lines[0].contains("scripts/rdma-lab"), lines[0]);
        assertFalse(r.err().contains("Exception"), r.err());
    }

    @Test
    void unknownSubcommandAndFlagsAreUsageErrors() {
        BenchRun r = BenchRun.of("frobnicate");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("unknown subcommand 'frobnicate'"), r.err());
        assertTrue(r.err().contains("usage: rdma-bench"), r.err());

        r = BenchRun.of("devices", "--bogus");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("unknown argument '--bogus'"), r.err());

        r = BenchRun.of();
        assertEquals(2, r.status());
        assertTrue(r.err().contains("usage: rdma-bench"));

        r = BenchRun.of("--help");
        assertEquals(0, r.status());
        assertTrue(r.out().contains("devices"));
    }
}
