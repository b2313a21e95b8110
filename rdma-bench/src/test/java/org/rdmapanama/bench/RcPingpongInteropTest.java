package org.rdmapanama.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rdma-bench rc_pingpong against libibverbs' own ibv_rc_pingpong, both ways, on
 * the RoCEv2 device selection picks (its out-of-band setup needs an IB transport).
 */
@Tag("device")
class RcPingpongInteropTest {
    /** The RoCEv2 selection; the native tool is given its GID index (-g), which must be a RoCEv2 GID. */
    static Selection roce() {
        Selection s = LabSelection.select(Transport.ROCE_V2);
        assertEquals(GidType.ROCE_V2, s.gid().type(), s.gid().toString());
        return s;
    }

    /** Starts a native tool on a vCPU of its own (not this JVM's), see {@link LabCpu}. */
    static Process nativeTool(String... args) throws IOException, InterruptedException {
        return LabCpu.start(new ProcessBuilder(args).redirectErrorStream(true));
    }

    static String finish(Process p) throws Exception {
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

    static void awaitListening(int port) throws Exception {
        String hex = String.format(":%04X ", port);
        for (int i = 0; i < 600; i++) {
            // Java's ServerSocket listens on the IPv6 wildcard: check tcp6 too.
            for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
                for (String line : Files.readAllLines(Path.of(table))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length > 3 && (f[1] + " ").contains(hex) && f[3].equals("0A")) {
                        return;
                    }
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("nothing listens on port " + port);
    }

    @Test
    void javaClientAgainstNativeServer() throws Exception {
        Selection s = roce();
        String dev = s.device().name();
        Process server = nativeTool("ibv_rc_pingpong", "-d", dev, "-g", Integer.toString(s.gidIndex()), "-n", "300",
                "-s", "2048", "-p", "18711", "-c");
        awaitListening(18711);
        MainTest.Result r = MainTest.run("rc_pingpong", "-d", dev, "-n", "300", "-s", "2048", "-p", "18711", "-c",
                LabSelection.address(s));
        String nativeOut = finish(server);
        System.out.println("native server:\n" + nativeOut + "java client:\n" + r.out() + r.err());
        assertEquals(0, r.status(), r.err());
        assertEquals(0, server.exitValue(), nativeOut);
        assertTrue(r.out().contains("300 iters in"), r.out());
        assertTrue(nativeOut.contains("1228800 bytes in") && nativeOut.contains("300 iters in"), nativeOut);
        assertFalse(nativeOut.contains("invalid data"), nativeOut);
    }

    @Test
    void nativeClientAgainstJavaServerInEventMode() throws Exception {
        Selection s = roce();
        String dev = s.device().name();
        CompletableFuture<MainTest.Result> server = CompletableFuture.supplyAsync(
                () -> MainTest.run("rc_pingpong", "-d", dev, "-n", "300", "-p", "18712", "-e", "-c"));
        awaitListening(18712);
        Process client = nativeTool("ibv_rc_pingpong", "-d", dev, "-g", Integer.toString(s.gidIndex()), "-n", "300",
                "-p", "18712", "-c", LabSelection.address(s));
        String nativeOut = finish(client);
        MainTest.Result r = server.get(120, TimeUnit.SECONDS);
        System.out.println("native client:\n" + nativeOut + "java server:\n" + r.out() + r.err());
        assertEquals(0, client.exitValue(), nativeOut);
        assertEquals(0, r.status(), r.err());
        assertTrue(nativeOut.contains("2457600 bytes in") && nativeOut.contains("300 iters in"), nativeOut);
        assertTrue(r.out().contains("300 iters in"), r.out());
        assertFalse(r.out().contains("invalid data"), r.out());
    }

    @Test
    void aMalformedPeerIsAClearErrorNotAHang() throws Exception {
        Selection s = roce();
        String addr = LabSelection.address(s);
        try (ServerSocket fake = new ServerSocket(18713, 1, InetAddress.getByName(addr))) {
            CompletableFuture.runAsync(() -> {
                try (Socket peer = fake.accept(); OutputStream out = peer.getOutputStream()) {
                    peer.getInputStream().readNBytes(52);
                    out.write("this is not an address".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException ignored) {
                    // the client's error is what is tested
                }
            });
            MainTest.Result r = MainTest.run("rc_pingpong", "-d", s.device().name(), "-n", "10", "-p", "18713", addr);
            assertEquals(1, r.status(), r.out() + r.err());
            assertTrue(r.err().contains("has 22 bytes, expected 52"), r.err());
            assertFalse(r.err().contains("Exception"), r.err());
        }
    }

    @Test
    void iwarpIsRefusedWithTheReason() {
        Selection s = LabSelection.select(Transport.IWARP);
        MainTest.Result r = MainTest.run("rc_pingpong", "-d", s.device().name(), "-n", "10", LabSelection.address(s));
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().contains("connects only through rdma_cm"), r.err());
    }

    @Test
    void badFlagsAreUsageErrors() {
        MainTest.Result r = MainTest.run("rc_pingpong", "-m", "1000");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("MTU must be"), r.err());
        r = MainTest.run("rc_pingpong", "-n", "zero");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("needs a number"), r.err());
    }
}
