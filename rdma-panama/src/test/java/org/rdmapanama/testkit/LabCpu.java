package org.rdmapanama.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The vCPU a test's peer process runs on in the lab: scripts/lab/pin picks it,
 * the same choice scripts/rdma-bench and scripts/test's JVM make, so a native
 * tool (or a second JVM) never spins on the vCPU of this busy JVM or of another
 * pinned peer, and says so on stderr when no vCPU is free (rdma-bench's tests
 * use it too, through this module's test jar). Outside the lab a command is
 * left as it is.
 */
public final class LabCpu {
    private LabCpu() {}

    /** The command, in the lab prefixed with scripts/lab/pin (--any: this JVM's one vCPU is no choice of the peer's). */
    public static List<String> onFreeVcpu(List<String> command) {
        if (!"1".equals(System.getenv("RDMA_LAB"))) {
            return command;
        }
        List<String> cmd = new ArrayList<>(List.of(script().toString(), "--any", "--name", "test",
                "--label", "test peer: " + String.join(" ", command)));
        cmd.addAll(command);
        return cmd;
    }

    /**
     * Starts the builder's command through {@link #onFreeVcpu}; in the lab, checks that it
     * got a vCPU of its own, one this JVM is not pinned to (else it is destroyed and the
     * test fails: a busy peer sharing this JVM's vCPU measures and times out wrongly).
     */
    public static Process start(ProcessBuilder b) throws IOException, InterruptedException {
        List<String> command = List.copyOf(b.command());
        Process p = b.command(onFreeVcpu(command)).start();
        if (!"1".equals(System.getenv("RDMA_LAB"))) {
            return p;
        }
        String mark = p.pid() + " test peer: ";
        long deadline = System.nanoTime() + 30_000_000_000L;
        Optional<Integer> cpu = Optional.empty();
        while (cpu.isEmpty() && System.nanoTime() < deadline && p.isAlive()) {
            cpu = heldBy(mark);
            if (cpu.isEmpty()) {
                Thread.sleep(20);
            }
        }
        cpu = cpu.or(() -> heldBy(mark)); // a short-lived peer may be gone, its lock file stays
        String mine = cpusAllowed();
        if (cpu.isEmpty() || mine.equals(cpu.get().toString())) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " got no vCPU of its own (this JVM's: " + mine
                    + ", the peer's: " + cpu.map(String::valueOf).orElse("none free") + ")");
        }
        return p;
    }

    /** The vCPU whose lock file names the holder MARK ("PID LABEL", as scripts/lab/pin writes it). */
    private static Optional<Integer> heldBy(String mark) {
        Path dir = Path.of(Optional.ofNullable(System.getenv("RDMA_LAB_PIN_DIR")).orElse("/tmp/rdma-lab-pin"));
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.matches("cpu\\d+") && Files.readString(f).startsWith(mark)) {
                    return Optional.of(Integer.parseInt(name.substring(3)));
                }
            }
        } catch (IOException e) {
            return Optional.empty(); // not there yet
        }
        return Optional.empty();
    }

    private static String cpusAllowed() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream().filter(l -> l.startsWith("Cpus_allowed_list:"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("?");
        } catch (IOException e) {
            return "?";
        }
    }

    /** scripts/lab/pin under $RDMA_ROOT (scripts/test exports it), else under the working directory or a parent. */
    public static Path script() {
        String root = System.getenv("RDMA_ROOT");
        if (root != null) {
            return Path.of(root, "scripts/lab/pin");
        }
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isExecutable(d.resolve("scripts/lab/pin"))) {
                return d.resolve("scripts/lab/pin");
            }
        }
        throw new IllegalStateException("scripts/lab/pin not found (RDMA_ROOT unset, and not under " + Path.of("").toAbsolutePath() + ")");
    }
}
