package org.rdmapanama.bench.rcpingpong;

import org.rdmapanama.bench.BenchRun;
import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.NativeTool;
import org.rdmapanama.testkit.LabCpu;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.Listeners;
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
import java.time.Duration;
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
    @Test
    void javaClientAgainstNativeServer() throws Exception {
        Selection s = LabSelection.roceV2Gid();
        String dev = s.device().name();
        String port = Integer.toString(LabPorts.next());
        Process server = NativeTool.start("ibv_rc_pingpong", "-d", dev, "-g", Integer.toString(s.gidIndex()), "-n", "300",
                "-s", "2048", "-p", port, "-c");
        Listeners.await(Integer.parseInt(port), server::isAlive, Duration.ofSeconds(60));
        BenchRun r = BenchRun.of("rc_pingpong", "-d", dev, "-n", "300", "-s", "2048", "-p", port, "-c",
                LabSelection.address(s));
        String nativeOut = NativeTool.finish(server);
        System.out.println("native server:\n" + nativeOut + "java client:\n" + r.out() + r.err());
        assertEquals(0, r.status(), r.err());
        assertEquals(0, server.exitValue(), nativeOut);
        assertTrue(r.out().contains("300 iters in"), r.out());
        assertTrue(nativeOut.contains("1228800 bytes in") && nativeOut.contains("300 iters in"), nativeOut);
        assertFalse(nativeOut.contains("invalid data"), nativeOut);
    }

    @Test
    void nativeClientAgainstJavaServerInEventMode() throws Exception {
        Selection s = LabSelection.roceV2Gid();
        String dev = s.device().name();
        String port = Integer.toString(LabPorts.next());
        CompletableFuture<BenchRun> server = CompletableFuture.supplyAsync(
                () -> BenchRun.of("rc_pingpong", "-d", dev, "-n", "300", "-p", port, "-e", "-c"));
        Listeners.await(Integer.parseInt(port), () -> !server.isDone(), Duration.ofSeconds(60));
        Process client = NativeTool.start("ibv_rc_pingpong", "-d", dev, "-g", Integer.toString(s.gidIndex()), "-n", "300",
                "-p", port, "-c", LabSelection.address(s));
        String nativeOut = NativeTool.finish(client);
        BenchRun r = server.get(120, TimeUnit.SECONDS);
        System.out.println("native client:\n" + nativeOut + "java server:\n" + r.out() + r.err());
        assertEquals(0, client.exitValue(), nativeOut);
        assertEquals(0, r.status(), r.err());
        assertTrue(nativeOut.contains("2457600 bytes in") && nativeOut.contains("300 iters in"), nativeOut);
        assertTrue(r.out().contains("300 iters in"), r.out());
        assertFalse(r.out().contains("invalid data"), r.out());
    }

    @Test
    void aMalformedPeerIsAClearErrorNotAHang() throws Exception {
        Selection s = LabSelection.roceV2Gid();
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
            BenchRun r = BenchRun.of("rc_pingpong", "-d", s.device().name(), "-n", "10", "-p", "18713", addr);
            assertEquals(1, r.status(), r.out() + r.err());
            assertTrue(r.err().contains("has 22 bytes, expected 52"), r.err());
            assertFalse(r.err().contains("Exception"), r.err());
        }
    }

    @Test
    void iwarpIsRefusedWithTheReason() throws Exception {
        Selection s = LabDevices.select(Transport.IWARP);
        BenchRun r = BenchRun.of("rc_pingpong", "-d", s.device().name(), "-n", "10", LabSelection.address(s));
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().contains("connects only through rdma_cm"), r.err());
    }

    @Test
    void badFlagsAreUsageErrors() {
        BenchRun r = BenchRun.of("rc_pingpong", "-m", "1000");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("MTU must be"), r.err());
        r = BenchRun.of("rc_pingpong", "-n", "zero");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("needs a number"), r.err());
    }
}
