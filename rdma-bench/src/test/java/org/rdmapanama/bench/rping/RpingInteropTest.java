package org.rdmapanama.bench.rping;

import org.rdmapanama.bench.BenchRun;
import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.testkit.LabCpu;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.Listeners;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code rdma-bench rping} against rdmacm-utils' native {@code rping}, both
 * ways, on each lab transport (RoCEv2 and iWARP; the device and its address
 * come from selection). The Java side runs in this JVM; native rping runs on a vCPU of its own ({@link LabCpu}).
 * Every wait is bounded; a native process that overstays is destroyed.
 */
@Tag("device")
class RpingInteropTest {
    private static final int COUNT = 5;
    private static final int SIZE = 100;
    private static final Duration NATIVE_LIMIT = Duration.ofSeconds(60);
    /** How long a server may take to listen: a JVM's or a native tool's start on a loaded lab vCPU. */
    private static final Duration LISTEN_GRACE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @BeforeEach
    void inTheLab() {
        assumeTrue("1".equals(System.getenv("RDMA_LAB")), "only in the soft-RDMA lab");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/rping")), "rdmacm-utils' rping is not installed");
    }

    /** Distinct ports per test and transport, so that nothing left behind by one test meets the next. */
    /**
     * What rping's client puts in its buffer for each ping, written here from
     * rping's description rather than from RpingPeer: "rdma-ping-N: ", then
     * letters rising from 'A' + N (mod 58) through 'z' and back to 'A', size - 1
     * characters in all (the last byte is the NUL).
     */
    static List<String> expectedPings(int count, int size) {
        List<String> pings = new ArrayList<>();
        for (int n = 0; n < count; n++) {
            StringBuilder s = new StringBuilder("rdma-ping-" + n + ": ");
            char c = (char) ('A' + n % 58);
            while (s.length() < size - 1) {
                s.append(c);
                c = c == 'z' ? 'A' : (char) (c + 1);
            }
            pings.add(s.toString());
        }
        return pings;
    }

    private static List<String> linesAfter(String prefix, String text) {
        return text.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).toList();
    }

    private Process nativeRping(String name, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("rping"));
        cmd.addAll(List.of(args));
        return LabCpu.start(new ProcessBuilder(cmd)
                .redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile()));
    }

    private int finish(Process p, String name) throws Exception {
        if (!p.waitFor(NATIVE_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            fail("native rping " + name + " did not end within " + NATIVE_LIMIT.toSeconds() + " s; stdout:\n"
                    + read(name + ".out") + "\nstderr:\n" + read(name + ".err"));
        }
        return p.exitValue();
    }

    private String read(String file) throws IOException {
        Path p = dir.resolve(file);
        return Files.exists(p) ? Files.readString(p) : "";
    }

    @OnEveryLabTransport
    void javaClientAgainstNativeServer(Transport transport) throws Exception {
        Selection s = LabDevices.select(transport);
        String device = s.device().name(), addr = LabSelection.address(s);
        String port = Integer.toString(LabPorts.next());
        Process server = nativeRping("server", "-s", "-a", addr, "-p", port, "-C", "" + COUNT, "-S", "" + SIZE, "-v");
        try {
            Listeners.await(Integer.parseInt(port), server::isAlive, LISTEN_GRACE);
            long start = System.nanoTime();
            BenchRun client = BenchRun.of("rping", "-c", "-a", addr, "-p", port, "-C", "" + COUNT, "-S", "" + SIZE,
                    "-v", "-V");
            long ms = (System.nanoTime() - start) / 1_000_000;
            int serverStatus = finish(server, "server");
            String serverOut = read("server.out");
            System.out.printf("rping %s: java client -> native server: %d ms%n"
                            + "java client stdout:%n%sjava client stderr:%n%snative server stdout:%n%snative server stderr:%n%s",
                    device, ms, client.out(), client.err(), serverOut, read("server.err"));
            assertEquals(0, client.status(), "java client: " + client.err());
            assertEquals("", client.err());
            assertEquals(0, serverStatus, "native server: " + read("server.err"));
            List<String> expected = expectedPings(COUNT, SIZE);
            assertEquals(expected, linesAfter("server ping data: ", serverOut), "what the native server read");
            assertEquals(expected, linesAfter("ping data: ", client.out()), "what the java client got back");
        } finally {
            server.destroyForcibly();
        }
    }

    @OnEveryLabTransport
    void nativeClientAgainstJavaServer(Transport transport) throws Exception {
        Selection s = LabDevices.select(transport);
        String device = s.device().name(), addr = LabSelection.address(s);
        String port = Integer.toString(LabPorts.next());
        CompletableFuture<BenchRun> server = new CompletableFuture<>();
        Thread serverThread = Thread.ofPlatform().daemon().name("rping-server-" + device).start(() -> {
            try {
                server.complete(BenchRun.of("rping", "-s", "-a", addr, "-p", port, "-S", "" + SIZE, "-v"));
            } catch (Throwable t) {
                server.completeExceptionally(t);
            }
        });
        try {
            Listeners.await(Integer.parseInt(port), () -> !server.isDone(), LISTEN_GRACE);
            long start = System.nanoTime();
            int clientStatus = finish(nativeRping("client", "-c", "-a", addr, "-p", port, "-C", "" + COUNT, "-S",
                    "" + SIZE, "-v", "-V"), "client");
            long ms = (System.nanoTime() - start) / 1_000_000;
            BenchRun result = server.get(30, TimeUnit.SECONDS);
            String clientOut = read("client.out");
            System.out.printf("rping %s: native client -> java server: %d ms%n"
                            + "native client stdout:%n%snative client stderr:%n%sjava server stdout:%n%sjava server stderr:%n%s",
                    device, ms, clientOut, read("client.err"), result.out(), result.err());
            assertEquals(0, clientStatus, "native client: " + read("client.err"));
            assertEquals(0, result.status(), "java server: " + result.err());
            assertEquals("", result.err());
            List<String> expected = expectedPings(COUNT, SIZE);
            assertEquals(expected, linesAfter("ping data: ", clientOut), "what the native client got back");
            assertEquals(expected, linesAfter("server ping data: ", result.out()), "what the java server read");
        } finally {
            if (serverThread.isAlive()) {
                serverThread.interrupt(); // the server's accept wait ends on interruption
                serverThread.join(10_000);
            }
        }
    }

    @OnEveryLabTransport
    void javaClientWithNoServerFailsClearlyAndFast(Transport transport) throws Exception {
        Selection s = LabDevices.select(transport);
        String device = s.device().name(), addr = LabSelection.address(s);
        long start = System.nanoTime();
        BenchRun r = BenchRun.of("rping", "-c", "-a", addr, "-p", Integer.toString(LabPorts.next()), "-C", "3");
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("rping %s: java client, nobody listening: status %d after %d ms: %s",
                device, r.status(), ms, r.err());
        assertEquals(1, r.status(), r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.getFirst().startsWith("rdma-bench rping: connecting to /" + addr + ":"), lines.getFirst());
        assertFalse(r.err().contains("Exception"), r.err());
        assertEquals("", r.out());
        assertTrue(ms < 10_000, "took " + ms + " ms");
    }

    @Test
    void badFlagsAreOneLineUsageErrors() {
        for (String[] args : new String[][] {
                {"rping", "-c", "-a", "10.77.0.1", "-S", "22"},
                {"rping", "-c", "-a", "10.77.0.1", "-S", "65536"},
                {"rping", "-s", "-C", "-1"},
                {"rping", "-s", "-p", "http"},
                {"rping", "-s", "-x"},
                {"rping", "-c"},
                {"rping", "-v"},
                {"rping", "-s", "-c"},
                {"rping", "-s", "-q"},
                {"rping", "-c", "-a"},
        }) {
            BenchRun r = BenchRun.of(args);
            String what = String.join(" ", args) + " -> " + r.err();
            assertEquals(2, r.status(), what);
            assertTrue(r.err().startsWith("rdma-bench rping: "), what);
            assertTrue(r.err().contains("\nusage: rdma-bench rping -s"), what);
            assertFalse(r.err().contains("Exception"), what);
        }
        assertTrue(BenchRun.of("rping", "-s", "-S", "22").err().contains("valid range is 23 to 65535"));
        BenchRun help = BenchRun.of("rping", "-h");
        assertEquals(0, help.status());
        assertTrue(help.out().contains("-S size"), help.out());
    }
}
