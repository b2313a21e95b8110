package org.rdmapanama.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.Selection;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * rdma-bench's perftest tests against Debian's native perftest 4.5 (ib_write_lat
 * etc.), both ways, over perftest's TCP exchange on the RoCEv2 device that
 * selection picks: both sides must exit 0 and print their result lines.
 * atomic_lat runs where the device reports atomics. The Java side runs in this
 * JVM; the native one on a vCPU of its own ({@link LabCpu}).
 */
@Tag("device")
class PerftestNativeInteropTest {
    private static final String N = "200";

    /** Small runs: 2-byte latency messages, 4 KiB bandwidth messages. */
    private static List<String> flags(PerftestOptions.Test t, Selection s, int port) {
        List<String> f = new ArrayList<>(List.of(t.command, "-d", s.device().name(), "-x", Integer.toString(s.gidIndex()),
                "-n", N, "-p", Integer.toString(port)));
        if (t.bw) {
            f.addAll(List.of("-s", "4096"));
        }
        return f;
    }

    private static Selection roce(PerftestOptions.Test t) {
        Selection s = RcPingpongInteropTest.roce();
        if (t == PerftestOptions.Test.ATOMIC_LAT) {
            assumeTrue(s.device().capabilities().atomicCap() != AtomicCapability.NONE,
                    s.device().name() + " reports atomic_cap NONE");
        }
        return s;
    }

    /** A result row: the size, then the iteration count. */
    private static boolean hasRow(String out, PerftestOptions.Test t) {
        String size = t.bw ? "4096" : t == PerftestOptions.Test.ATOMIC_LAT ? "8" : "2";
        return Pattern.compile("(?m)^\\s*" + size + "\\s+" + N + "\\s+\\S+").matcher(out).find();
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

    @ParameterizedTest
    @EnumSource(PerftestOptions.Test.class)
    void javaServerNativeClient(PerftestOptions.Test t) throws Exception {
        Selection s = roce(t);
        int port = 18820 + t.ordinal();
        List<String> f = flags(t, s, port);
        List<String> java = new ArrayList<>(f);
        java.add("--no-warmup");
        CompletableFuture<MainTest.Result> server = CompletableFuture.supplyAsync(
                () -> MainTest.run(java.toArray(String[]::new)));
        RcPingpongInteropTest.awaitListening(port);
        Process client = RcPingpongInteropTest.nativeTool(
                nativeCommand(t, f, LabSelection.address(s)).toArray(String[]::new));
        String nativeOut = RcPingpongInteropTest.finish(client);
        MainTest.Result r = server.get(120, TimeUnit.SECONDS);
        System.out.println(t.command + ": java server:\n" + r.out() + r.err() + "native client:\n" + nativeOut);
        assertEquals(0, r.status(), r.err());
        assertEquals(0, client.exitValue(), nativeOut);
        assertTrue(hasRow(nativeOut, t), nativeOut);
        assertEquals(serverPrintsRow(t), hasRow(r.out(), t), r.out());
        assertTrue(r.out().strip().endsWith(PerftestStats.RESULT_LINE.strip()), r.out());
    }

    @ParameterizedTest
    @EnumSource(PerftestOptions.Test.class)
    void nativeServerJavaClient(PerftestOptions.Test t) throws Exception {
        Selection s = roce(t);
        int port = 18840 + t.ordinal();
        List<String> f = flags(t, s, port);
        Process server = RcPingpongInteropTest.nativeTool(nativeCommand(t, f, null).toArray(String[]::new));
        RcPingpongInteropTest.awaitListening(port);
        List<String> java = new ArrayList<>(f);
        // A client whose native server is passive warms up alone (PerftestLink.warmup); the others cannot.
        java.add(PerftestLink.clientDriven(t) ? "--warmup=2" : "--no-warmup");
        java.add(LabSelection.address(s));
        MainTest.Result r = MainTest.run(java.toArray(String[]::new));
        String nativeOut = RcPingpongInteropTest.finish(server);
        System.out.println(t.command + ": native server:\n" + nativeOut + "java client:\n" + r.out() + r.err());
        assertEquals(0, r.status(), r.err());
        assertEquals(0, server.exitValue(), nativeOut);
        assertTrue(hasRow(r.out(), t), r.out());
        assertEquals(serverPrintsRow(t), hasRow(nativeOut, t), nativeOut);
        if (PerftestLink.clientDriven(t)) {
            assertTrue(r.err().contains("warm-up: "), r.err());
        }
    }

    @Test
    void anOldPeerGetsPerftestsComplaintNotAHang() throws Exception {
        Selection s = RcPingpongInteropTest.roce();
        String addr = LabSelection.address(s);
        try (ServerSocket fake = new ServerSocket(18860, 1, InetAddress.getByName(addr))) {
            CompletableFuture.runAsync(() -> {
                try (Socket peer = fake.accept(); OutputStream out = peer.getOutputStream()) {
                    peer.getInputStream().readNBytes(16);
                    out.write(new byte[] {'5', '.', '6', '0', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
                    peer.getInputStream().readNBytes(16); // until the client hangs up
                } catch (IOException ignored) {
                    // the client's error is what is tested
                }
            });
            MainTest.Result r = MainTest.run("write_lat", "-d", s.device().name(), "-x", Integer.toString(s.gidIndex()),
                    "-n", "10", "-p", "18860", addr);
            assertEquals(1, r.status(), r.out() + r.err());
            assertTrue(r.err().contains("not compatible with versions older than 5.70"), r.err());
            assertFalse(r.err().contains("Exception"), r.err());
        }
    }

    @Test
    void aMismatchedJavaPeerIsAOneLineError() throws Exception {
        Selection s = RcPingpongInteropTest.roce();
        String dev = s.device().name(), gid = Integer.toString(s.gidIndex());
        CompletableFuture<MainTest.Result> server = CompletableFuture.supplyAsync(
                () -> MainTest.run("write_lat", "-d", dev, "-x", gid, "-n", "10", "-p", "18861", "--no-warmup"));
        RcPingpongInteropTest.awaitListening(18861);
        MainTest.Result c = MainTest.run("write_lat", "-d", dev, "-x", gid, "-n", "20", "-p", "18861", "--no-warmup",
                LabSelection.address(s));
        MainTest.Result r = server.get(120, TimeUnit.SECONDS);
        assertEquals(1, c.status(), c.out() + c.err());
        assertEquals(1, r.status(), r.out() + r.err());
        assertTrue(c.err().contains("iteration count is 10, here 20"), c.err());
    }
}
