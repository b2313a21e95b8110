package org.rdmapanama.bench.scale;

import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.device.Transport;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdma-bench scale}'s server and client, in one JVM on threads of
 * their own: every connection of every batch set up asynchronously, its
 * Write and Send checked at the server, and each batch reported.
 */
@Tag("device")
class ScaleSessionsDeviceTest {
    private static final Pattern BATCH = Pattern.compile(
            "scale client: batch (\\d) of 2 \\((cold|warm)\\): 12 connections, (all|5) at a time: .*session [0-9.]+ s, [0-9.]+ connections/s");

    @OnEveryLabTransport
    void twoBatchesOfConnectionsCarryTheirOwnData(Transport t) throws Exception {
        InetAddress addr = InetAddress.getByName(LabSelection.address(LabDevices.select(t)));
        run(new InetSocketAddress(addr, LabPorts.next()), 12); // all at once
        run(new InetSocketAddress(addr, LabPorts.next()), 5); // a window of 5: each completion starts the next
    }

    private static void run(InetSocketAddress at, int window) throws Exception {
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream(), clientOut = new ByteArrayOutputStream();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> {
            try (PrintStream p = new PrintStream(serverOut, true, StandardCharsets.UTF_8)) {
                return ScaleSessions.server(at, 12, 2, p);
            } catch (Exception e) {
                throw new AssertionError("the server failed: " + e.getMessage(), e);
            }
        });
        while (!serverOut.toString(StandardCharsets.UTF_8).contains("listening")) {
            assertTrue(!server.isDone(), () -> "the server ended before it listened: " + server.join());
            Thread.sleep(20);
        }
        int status;
        try (PrintStream p = new PrintStream(clientOut, true, StandardCharsets.UTF_8)) {
            status = ScaleSessions.client(at, 12, window, 2, p);
        }
        String client = clientOut.toString(StandardCharsets.UTF_8);
        assertEquals(CliArgs.OK, status, client);
        assertEquals(CliArgs.OK, server.get(60, TimeUnit.SECONDS), serverOut.toString(StandardCharsets.UTF_8));
        long batches = client.lines().filter(l -> BATCH.matcher(l).matches()).count();
        assertEquals(2, batches, client);
        assertTrue(client.contains("cold: from the process's exec to the last close of batch 1"), client);
        String served = serverOut.toString(StandardCharsets.UTF_8);
        for (int b = 1; b <= 2; b++) {
            assertTrue(served.contains("batch " + b + " of 2: 12 connections, data verified on each, all disconnected"), served);
        }
    }
}
