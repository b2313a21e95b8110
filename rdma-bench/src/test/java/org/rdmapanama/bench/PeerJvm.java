package org.rdmapanama.bench;

import org.rdmapanama.testkit.LabCpu;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** rdma-bench in a JVM of its own, for tests whose peer must die as a crashed process does. */
public final class PeerJvm {
    private PeerJvm() {}

    /** The peer's output, copied into {@code out} as it comes. */
    public static Process start(List<String> args, ByteArrayOutputStream out) throws IOException, InterruptedException {
        Process p = javaClient(args);
        Thread.ofPlatform().daemon().start(() -> {
            try {
                p.getInputStream().transferTo(out);
            } catch (IOException e) {
                // the process was killed
            }
        });
        return p;
    }

    /** rdma-bench in a JVM of its own, on a vCPU of its own in the lab; stderr merged into stdout. */
    private static Process javaClient(List<String> args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        String path = System.getProperty("java.class.path", "");
        String modules = System.getProperty("jdk.module.path", "");
        String cp = modules.isEmpty() ? path : path.isEmpty() ? modules : path + File.pathSeparator + modules;
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", cp,
                Main.class.getName()));
        cmd.addAll(args);
        return LabCpu.start(new ProcessBuilder(cmd).redirectErrorStream(true));
    }
}
