package org.rdmapanama.bench;

import org.rdmapanama.testkit.LabCpu;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The native tools an interop test runs against (ibv_rc_pingpong, ib_*, rping): started, awaited, read. */
public final class NativeTool {
    private NativeTool() {}

    /** Starts a native tool on a vCPU of its own (not this JVM's), see {@link LabCpu}. */
    public static Process start(String... args) throws IOException, InterruptedException {
        return LabCpu.start(new ProcessBuilder(args).redirectErrorStream(true));
    }

    public static String finish(Process p) throws Exception {
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return e.toString();
            }
        });
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("native tool hung; output so far: " + output.getNow(""));
        }
        return output.get(10, TimeUnit.SECONDS);
    }
}
