package org.rdmapanama.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The vCPU a test's peer process runs on in the lab: scripts/lab/pin picks it,
 * the same choice scripts/rdma-bench and scripts/test's JVM make, so a native
 * tool (or a second JVM) never spins on the vCPU of this busy JVM or of another
 * pinned peer, and says so on stderr when no vCPU is free. rdma-panama's test
 * helper LabCpu is its twin (the modules share no test code). Outside the lab
 * a command is left as it is.
 */
final class LabCpu {
    private LabCpu() {}

    /** The command, in the lab prefixed with scripts/lab/pin (--any: this JVM's one vCPU is no choice of the peer's). */
    static List<String> onFreeVcpu(List<String> command) {
        if (!"1".equals(System.getenv("RDMA_LAB"))) {
            return command;
        }
        List<String> cmd = new ArrayList<>(List.of(script().toString(), "--any", "--name", "test",
                "--label", "test peer: " + String.join(" ", command)));
        cmd.addAll(command);
        return cmd;
    }

    /** scripts/lab/pin under $RDMA_ROOT (scripts/test exports it), else under the working directory or a parent. */
    static Path script() {
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
