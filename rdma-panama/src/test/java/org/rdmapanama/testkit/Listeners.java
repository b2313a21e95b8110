package org.rdmapanama.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The one wait for a server to be ready, in every device test: polled, never
 * slept for. A listener shows as a TCP socket in LISTEN (a perftest exchange
 * port, an iWARP rdma_cm listener, which siw keeps as a TCP socket) or, on
 * RoCE and InfiniBand, only in {@code rdma res show cm_id}.
 */
public final class Listeners {
    private Listeners() {}

    /** Waits for a listener on {@code port}; fails at once if {@code serverAlive} turns false, or after {@code timeout}. */
    public static void await(int port, BooleanSupplier serverAlive, Duration timeout)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!listening(port)) {
            if (!serverAlive.getAsBoolean()) {
                throw new AssertionError("the server ended before it listened on port " + port);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("nothing listened on port " + port + " within " + timeout.toSeconds() + " s");
            }
            Thread.sleep(50);
        }
    }

    /** {@link #await(int, BooleanSupplier, Duration)} for a server this test cannot watch, for 60 s. */
    public static void await(int port) throws IOException, InterruptedException {
        await(port, () -> true, Duration.ofSeconds(60));
    }

    public static boolean listening(int port) throws IOException, InterruptedException {
        return tcpListening(port) || rdmaCmListening(port);
    }

    static boolean tcpListening(int port) throws IOException {
        String hex = String.format(":%04X ", port);
        for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) { // Java listens on the IPv6 wildcard
            for (String line : Files.readAllLines(Path.of(table))) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && (f[1] + " ").contains(hex) && f[3].equals("0A")) {
                    return true;
                }
            }
        }
        return false;
    }

    static boolean rdmaCmListening(int port) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "res", "show", "cm_id").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out.lines().anyMatch(l -> l.contains("LISTEN") && l.contains(":" + port + " "));
    }
}
