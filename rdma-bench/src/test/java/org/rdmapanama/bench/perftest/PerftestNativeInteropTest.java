package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.BenchRun;
import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.NativeTool;
import org.rdmapanama.testkit.LabCpu;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.Listeners;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * rdma-bench's perftest tests against Debian's native perftest 4.5 (ib_write_lat
 * etc.), both ways, on the devices selection picks by transport: RoCEv2 over
 * perftest's TCP exchange and with {@code -R}, iWARP with {@code -R}. Both sides
 * must exit 0 and print their result lines. The Java side runs in this JVM; the
 * native one on a vCPU of its own ({@link LabCpu}).
 */
@Tag("device")
class PerftestNativeInteropTest {
    private static final String N = "200";

    /**
     * A test on a transport: RoCEv2 over perftest's TCP exchange or with {@code -R}, iWARP with
     * {@code -R} (its only way). Not run: atomic_lat where the device has no atomics. send_bw on
     * iWARP runs with perftest's receive credits.
     */
    record Case(PerftestOptions.Test test, Transport transport, boolean rdmaCm, int qps) {
        Case(PerftestOptions.Test test, Transport transport, boolean rdmaCm) {
            this(test, transport, rdmaCm, 1);
        }

        @Override
        public String toString() {
            return test.command + (qps > 1 ? " -q " + qps : "") + " on " + transport + (rdmaCm ? " -R" : " (TCP exchange)");
        }
    }

    static Stream<Case> cases() {
        Stream<Case> roce = Arrays.stream(PerftestOptions.Test.values()).map(t -> new Case(t, Transport.ROCE_V2, false));
        Stream<Case> roceCm = Arrays.stream(PerftestOptions.Test.values()).map(t -> new Case(t, Transport.ROCE_V2, true));
        Stream<Case> iwarp = Arrays.stream(PerftestOptions.Test.values())
                .filter(t -> t != PerftestOptions.Test.ATOMIC_LAT)
                .map(t -> new Case(t, Transport.IWARP, true));
        // -q: perftest's QP-by-QP handshakes and, with -R, a connection per QP in QP order.
        Stream<Case> qps = Stream.of(PerftestOptions.Test.WRITE_BW, PerftestOptions.Test.READ_BW).flatMap(t -> Stream.of(
                new Case(t, Transport.ROCE_V2, false, 3), new Case(t, Transport.ROCE_V2, true, 3),
                new Case(t, Transport.IWARP, true, 3)));
        return Stream.of(roce, roceCm, iwarp, qps).flatMap(x -> x);
    }

    /** Small runs: 2-byte latency messages, 4 KiB bandwidth messages. */
    private static List<String> flags(Case c, Selection s, int port) {
        List<String> f = new ArrayList<>(List.of(c.test().command, "-d", s.device().name(), "-n", N,
                "-p", Integer.toString(port)));
        f.addAll(c.rdmaCm() ? List.of("-R") : List.of("-x", Integer.toString(s.gidIndex())));
        if (c.test().bw) {
            f.addAll(List.of("-s", "4096"));
        }
        if (c.qps() > 1) {
            f.addAll(List.of("-q", Integer.toString(c.qps())));
        }
        return f;
    }

    private static Selection select(Case c) throws RdmaException {
        Selection s = c.transport() == Transport.ROCE_V2 ? LabSelection.roceV2Gid() : LabDevices.select(c.transport());
        if (c.test() == PerftestOptions.Test.ATOMIC_LAT) {
            assumeTrue(s.device().capabilities().atomicCap() != AtomicCapability.NONE,
                    s.device().name() + " reports atomic_cap NONE");
        }
        return s;
    }


    /** A result row: the size, then the iteration count (perftest's counts the WRs of all the QPs). */
    private static boolean hasRow(String out, Case c) {
        PerftestOptions.Test t = c.test();
        String size = t.bw ? "4096" : t == PerftestOptions.Test.ATOMIC_LAT ? "8" : "2";
        String iters = Integer.toString(Integer.parseInt(N) * c.qps());
        return Pattern.compile("(?m)^\\s*" + size + "\\s+" + iters + "\\s+\\S+").matcher(out).find();
    }

    /** perftest's read_lat and atomic_lat servers print no row, only the closing line. */
    private static boolean serverPrintsRow(PerftestOptions.Test t) {
        return t.bw || t == PerftestOptions.Test.WRITE_LAT || t == PerftestOptions.Test.SEND_LAT;
    }

    private static List<String> nativeCommand(PerftestOptions.Test t, List<String> flags, String address) {
        List<String> cmd = new ArrayList<>(List.of("ib_" + t.command));
        cmd.addAll(flags.subList(1, flags.size()));
        if (address != null) {
            cmd.add(address);
        }
        return cmd;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void javaServerNativeClient(Case c) throws Exception {
        PerftestOptions.Test t = c.test();
        Selection s = select(c);
        int port = LabPorts.next();
        List<String> f = flags(c, s, port);
        List<String> java = new ArrayList<>(f);
        java.add(warmup(t, true));
        CompletableFuture<BenchRun> server = CompletableFuture.supplyAsync(
                () -> BenchRun.of(java.toArray(String[]::new)));
        Listeners.await(port);
        Process client = NativeTool.start(
                nativeCommand(t, f, LabSelection.address(s)).toArray(String[]::new));
        String nativeOut = NativeTool.finish(client);
        BenchRun r;
        try {
            r = server.get(120, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the Java server did not end within 120 s of the native client; the client printed:\n"
                    + nativeOut + "\n" + where(), e);
        }
        System.out.println(t.command + ": java server:\n" + r.out() + r.err() + "native client:\n" + nativeOut);
        assertEquals(0, r.status(), r.err() + "\nnative client:\n" + nativeOut);
        assertEquals(0, client.exitValue(), nativeOut + "\njava server:\n" + r.out() + r.err());
        assertTrue(hasRow(nativeOut, c), nativeOut);
        assertEquals(serverPrintsRow(t), hasRow(r.out(), c), r.out());
        assertTrue(r.out().strip().endsWith(PerftestRows.RESULT_LINE.strip()), r.out());
        assertWarmedUp(t, true, r);
    }

    /** A short local warm-up wherever our side has a loop (PerftestLoopback); passive servers have none. */
    private static String warmup(PerftestOptions.Test t, boolean server) {
        return PerftestLoopback.role(t, server) != null ? "--warmup=2" : "--no-warmup";
    }

    private static void assertWarmedUp(PerftestOptions.Test t, boolean server, BenchRun r) {
        if (PerftestLoopback.role(t, server) != null) {
            assertTrue(r.err().contains("rounds in") && r.err().contains("on a loopback connection"), r.err());
            assertFalse(r.err().contains("warm-up: failed"), r.err());
        } else {
            assertFalse(r.err().contains("warm-up: "), r.err());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nativeServerJavaClient(Case c) throws Exception {
        PerftestOptions.Test t = c.test();
        Selection s = select(c);
        int port = LabPorts.next();
        List<String> f = flags(c, s, port);
        Process server = NativeTool.start(nativeCommand(t, f, null).toArray(String[]::new));
        Listeners.await(port);
        List<String> java = new ArrayList<>(f);
        java.add(warmup(t, false));
        java.add(LabSelection.address(s));
        BenchRun r = BenchRun.of(java.toArray(String[]::new));
        String nativeOut = NativeTool.finish(server);
        System.out.println(t.command + ": native server:\n" + nativeOut + "java client:\n" + r.out() + r.err());
        assertEquals(0, r.status(), r.err() + "\nnative server:\n" + nativeOut);
        assertEquals(0, server.exitValue(), nativeOut + "\njava client:\n" + r.out() + r.err());
        assertTrue(hasRow(r.out(), c), r.out());
        assertEquals(serverPrintsRow(t), hasRow(nativeOut, c), nativeOut);
        assertWarmedUp(t, false, r);
    }

    /** Where a hung run is: this JVM's threads and the rdma_cm ids and QPs still open on the host. */
    private static String where() throws Exception {
        StringBuilder sb = new StringBuilder("threads:\n");
        Thread.getAllStackTraces().forEach((t, st) -> {
            sb.append('"').append(t.getName()).append("\" ").append(t.getState()).append('\n');
            for (StackTraceElement e : st) {
                sb.append("    at ").append(e).append('\n');
            }
        });
        for (String what : new String[] {"cm_id", "qp"}) {
            Process p = new ProcessBuilder("rdma", "res", "show", what).redirectErrorStream(true).start();
            sb.append("rdma res show ").append(what).append(":\n").append(new String(p.getInputStream().readAllBytes()));
            p.waitFor();
        }
        return sb.toString();
    }

    @Test
    void anOldPeerGetsPerftestsComplaintNotAHang() throws Exception {
        Selection s = LabSelection.roceV2Gid();
        String addr = LabSelection.address(s);
        int port = LabPorts.next();
        try (ServerSocket fake = new ServerSocket(port, 1, InetAddress.getByName(addr))) {
            CompletableFuture.runAsync(() -> {
                try (Socket peer = fake.accept(); OutputStream out = peer.getOutputStream()) {
                    peer.getInputStream().readNBytes(16);
                    out.write(new byte[] {'5', '.', '6', '0', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
                    peer.getInputStream().readNBytes(16); // until the client hangs up
                } catch (IOException ignored) {
                    // the client's error is what is tested
                }
            });
            BenchRun r = BenchRun.of("write_lat", "-d", s.device().name(), "-x", Integer.toString(s.gidIndex()),
                    "-n", "10", "-p", Integer.toString(port), addr);
            assertEquals(1, r.status(), r.out() + r.err());
            assertTrue(r.err().contains("not compatible with versions older than 5.70"), r.err());
            assertFalse(r.err().contains("Exception"), r.err());
        }
    }

    @Test
    void aMismatchedJavaPeerIsAOneLineError() throws Exception {
        Selection s = LabSelection.roceV2Gid();
        String dev = s.device().name(), gid = Integer.toString(s.gidIndex());
        String port = Integer.toString(LabPorts.next());
        CompletableFuture<BenchRun> server = CompletableFuture.supplyAsync(
                () -> BenchRun.of("write_lat", "-d", dev, "-x", gid, "-n", "10", "-p", port, "--no-warmup"));
        Listeners.await(Integer.parseInt(port), () -> !server.isDone(), Duration.ofSeconds(60));
        BenchRun c = BenchRun.of("write_lat", "-d", dev, "-x", gid, "-n", "20", "-p", port, "--no-warmup",
                LabSelection.address(s));
        BenchRun r = server.get(120, TimeUnit.SECONDS);
        assertEquals(1, c.status(), c.out() + c.err());
        assertEquals(1, r.status(), r.out() + r.err());
        assertTrue(c.err().contains("iteration count is 10, here 20"), c.err());
    }
}
