package org.rdmapanama.bench;

import org.rdmapanama.testkit.LabCpu;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * scripts/lab/pin, which picks the lab vCPU of every JVM and test peer, run on
 * this machine's CPUs as if in the lab (RDMA_LAB=1, its lock files in a temp
 * directory): two holders get different CPUs, a third shares one and says with
 * whom, an explicit taskset onto a held CPU is kept and warned about, a holder's
 * death frees its CPU, and outside the lab nothing is pinned or said.
 */
class LabPinTest {
    @TempDir
    Path locks;
    private final List<Process> holders = new ArrayList<>();

    record Run(String cpus, String err) {}

    @AfterEach
    void killHolders() throws InterruptedException {
        for (Process p : holders) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** scripts/lab/pin CMD, after PREFIX (a taskset: a pin on purpose); without one, with --any. */
    private ProcessBuilder pin(boolean lab, List<String> prefix, String label, String... cmd) {
        List<String> c = new ArrayList<>(prefix);
        c.add(LabCpu.script().toString());
        if (prefix.isEmpty()) {
            c.add("--any");
        }
        c.addAll(List.of("--name", "t", "--label", label));
        c.addAll(List.of(cmd));
        ProcessBuilder b = new ProcessBuilder(c);
        Map<String, String> env = b.environment();
        env.put("RDMA_LAB_PIN_DIR", locks.toString());
        if (lab) {
            env.put("RDMA_LAB", "1");
        } else {
            env.remove("RDMA_LAB");
        }
        return b;
    }

    /**
     * A holder that sleeps; returns once it has named itself in a lock file and taskset has pinned it
     * (the script names itself just before it execs taskset).
     */
    private Process hold(String label) throws Exception {
        Process p = pin(true, List.of(), label, "sleep", "60").redirectErrorStream(true).start();
        holders.add(p);
        String mark = p.pid() + " " + label;
        for (int i = 0; i < 200; i++) {
            try (var files = Files.list(locks)) {
                for (Path f : files.toList()) {
                    if (Files.readString(f).strip().equals(mark) && cpusOf(p).matches("\\d+")) {
                        return p;
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError(label + " named itself in no lock file");
    }

    private Run run(boolean lab, List<String> prefix) throws Exception {
        Process p = pin(lab, prefix, "probe", "sh", "-c", "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status")
                .redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), err);
        return new Run(out, err);
    }

    private static String cpusOf(Process p) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + p.pid() + "/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring(line.indexOf(':') + 1).strip();
            }
        }
        throw new AssertionError("no Cpus_allowed_list for " + p.pid());
    }

    @Test
    void holdersNeverShareACpuSilently() throws Exception {
        String online = Files.readString(Path.of("/sys/devices/system/cpu/online")).strip();
        assumeTrue(online.equals("0-1"), "written for two CPUs like the lab's; this machine has " + online);

        Process a = hold("server A");
        Process b = hold("client B");
        assertEquals("0", cpusOf(a));
        assertEquals("1", cpusOf(b));

        Run third = run(true, List.of());
        assertEquals("0", third.cpus());
        assertEquals("t: no free vCPU; sharing vCPU 0 with pid " + a.pid() + " (server A): two busy-polling processes"
                + " on one vCPU take turns a scheduler slice at a time, and latencies come out hundreds of times too high",
                third.err());

        // Without --any the inherited affinity is the choice: a pin on purpose is kept and warned about.
        Run onPurpose = run(true, List.of("taskset", "-c", "1"));
        assertEquals("1", onPurpose.cpus());
        assertTrue(onPurpose.err().startsWith("t: pinned to vCPU 1, which pid " + b.pid() + " (client B) already holds: "),
                onPurpose.err());

        // SIGKILL ends the hold with the holder.
        a.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Run after = run(true, List.of());
        assertEquals("0", after.cpus());
        assertEquals("", after.err());
    }

    @Test
    void outsideTheLabNothingIsPinnedOrSaid() throws Exception {
        String mine = Files.readAllLines(Path.of("/proc/self/status")).stream()
                .filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst().orElseThrow().split(":")[1].strip();
        Run r = run(false, List.of());
        assertEquals(mine, r.cpus());
        assertEquals("", r.err());
        try (var files = Files.list(locks)) {
            assertFalse(files.findAny().isPresent(), "a lock file outside the lab");
        }
        assertNotEquals("", mine);
    }
}
