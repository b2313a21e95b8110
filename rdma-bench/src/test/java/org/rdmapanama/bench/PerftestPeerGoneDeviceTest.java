package org.rdmapanama.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client killed mid-run ends its server's run at once, as native perftest's
 * does: the server (in this JVM) exits with status 1 and says which signal it
 * saw, long before any of its timeouts (30 s and more). The client is a JVM of
 * its own, so that killing it closes its sockets and rdma_cm ids as a crash does.
 */
@Tag("device")
class PerftestPeerGoneDeviceTest {
    /** Far below the 30 s stall and 60 s + -D barrier timeouts the server would otherwise wait out. */
    static final long BOUND_SECONDS = 10;

    @ParameterizedTest(name = "{0} on {1} {2}")
    @CsvSource({
            "write_bw,  ROCE_V2, gid, -D 30",
            "write_lat, ROCE_V2, gid, -D 30",
            "write_bw,  IWARP,   -R,  -D 30",
            "send_lat,  IWARP,   -R,  -D 30",
    })
    @Timeout(value = 200, unit = TimeUnit.SECONDS)
    void aKilledClientEndsTheServersRunAtOnce(String test, Transport transport, String mode, String length)
            throws Exception {
        Selection s = LabSelection.select(transport);
        List<String> args = new ArrayList<>(List.of(test, "-d", s.device().name()));
        args.addAll(mode.equals("gid") ? PerftestDeviceTest.gidFlag(s) : List.of(mode));
        args.addAll(Arrays.asList(length.split(" ")));
        args.addAll(List.of("--warmup=1", "-p", Integer.toString(PerftestDeviceTest.PORTS.getAndIncrement())));

        ByteArrayOutputStream sOut = new ByteArrayOutputStream();
        ByteArrayOutputStream sErr = new ByteArrayOutputStream();
        int[] sStatus = {-1};
        Thread server = Thread.ofPlatform().daemon().name("perftest-server").start(() ->
                sStatus[0] = Main.run(args.toArray(String[]::new), new PrintStream(sOut, true, StandardCharsets.UTF_8),
                        new PrintStream(sErr, true, StandardCharsets.UTF_8)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!sOut.toString(StandardCharsets.UTF_8).contains("Waiting for client to connect")) {
            if (!server.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("the server did not start listening: " + sOut + sErr);
            }
            Thread.sleep(50);
        }
        List<String> clientArgs = new ArrayList<>(args);
        clientArgs.add(LabSelection.address(s));
        Process client = javaClient(clientArgs);
        ByteArrayOutputStream cOut = new ByteArrayOutputStream();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                client.getInputStream().transferTo(cOut);
            } catch (IOException e) {
                // the process was killed
            }
        });
        try {
            // Connected and past the header: the run (its warm-up or timed part) is under way.
            while (!sOut.toString(StandardCharsets.UTF_8).contains("Data ex. method")) {
                if (!client.isAlive() || !server.isAlive() || System.nanoTime() > deadline) {
                    throw new AssertionError("the run did not start; client: " + cOut + "\nserver: " + sOut + sErr);
                }
                Thread.sleep(50);
            }
            Thread.sleep(3000);
            assertTrue(client.isAlive(), "the client ended before it was killed: " + cOut + "\nserver: " + sOut + sErr);
            assertTrue(server.isAlive(), "the server ended before its client was killed: " + sOut + sErr
                    + "\nclient: " + cOut);
        } finally {
            client.destroyForcibly();
        }
        client.waitFor(30, TimeUnit.SECONDS);
        long killed = System.nanoTime();
        server.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        double took = (System.nanoTime() - killed) / 1e9;
        assertFalse(server.isAlive(), "the server still runs " + BOUND_SECONDS + " s after its client was killed: "
                + sOut + sErr);
        String err = sErr.toString(StandardCharsets.UTF_8);
        System.out.printf("%s on %s %s: the server ended %.2f s after the kill: %s", test, transport, mode, took, err);
        assertEquals(1, sStatus[0], sOut + err);
        assertTrue(err.contains("rdma-bench " + test + ": the peer went away ("), err);
        assertFalse(err.contains("Exception"), err);
    }

    /** rdma-bench in a JVM of its own, on a vCPU of its own in the lab; stderr merged into stdout. */
    static Process javaClient(List<String> args) throws IOException, InterruptedException {
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
