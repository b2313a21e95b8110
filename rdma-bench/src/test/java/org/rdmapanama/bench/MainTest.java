package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class MainTest {
    record Result(int status, String out, String err) {}

    static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void withoutDevicesSaysSoInOneLineAndExits2() {
        assumeFalse(Files.isDirectory(Path.of("/sys/class/infiniband")), "this machine has RDMA support");
        Result r = run("devices");
        assertEquals(2, r.status());
        assertEquals("", r.out());
        String[] lines = r.err().strip().split("\n");
        assertEquals(1, lines.length, r.err());
        assertTrue(lines[0].startsWith("rdma-bench: no RDMA devices found"), lines[0]);
        assertTrue(lines[0].contains("scripts/rdma-lab"), lines[0]);
        assertFalse(r.err().contains("Exception"), r.err());
    }

    @Test
    void unknownSubcommandAndFlagsAreUsageErrors() {
        Result r = run("frobnicate");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("unknown subcommand 'frobnicate'"), r.err());
        assertTrue(r.err().contains("usage: rdma-bench"), r.err());

        r = run("devices", "--bogus");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("unknown argument '--bogus'"), r.err());

        r = run();
        assertEquals(2, r.status());
        assertTrue(r.err().contains("usage: rdma-bench"));

        r = run("--help");
        assertEquals(0, r.status());
        assertTrue(r.out().contains("devices"));
    }
}
