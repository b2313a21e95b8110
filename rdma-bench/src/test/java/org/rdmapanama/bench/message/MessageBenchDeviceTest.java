package org.rdmapanama.bench.message;

import org.junit.jupiter.api.Tag;
import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.Main;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code channel_rpc} and {@code tcp_rpc} as a user runs them, server then client, in one JVM on threads of
 * their own, on the device each lab transport selects: a row per size counting every request of every
 * connection, and the server ending OK once the client's connections closed. Without a warm-up, and with
 * the channel's loops sleeping (-e): correctness, not timing.
 */
@Tag("device")
class MessageBenchDeviceTest {
    @OnEveryLabTransport
    void channelRpcRepliesToEveryRequestOfEveryChannel(Transport t) throws Exception {
        run("channel_rpc", t, "-e");
    }

    @OnEveryLabTransport
    void tcpRpcRepliesToEveryRequestOnTheDevicesInterface(Transport t) throws Exception {
        run("tcp_rpc", t);
    }

    private static void run(String name, Transport t, String... extra) throws Exception {
        Selection sel = LabDevices.select(t);
        String port = Integer.toString(LabPorts.next());
        List<String> common = new ArrayList<>(List.of("-d", sel.device().name(), "-p", port, "-w", "4"));
        common.addAll(List.of(extra));
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream(), serverErr = new ByteArrayOutputStream();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> Main.run(
                cons(name, common).toArray(String[]::new), print(serverOut), print(serverErr)));
        while (!serverOut.toString(StandardCharsets.UTF_8).contains("Waiting for client")) {
            assertFalse(server.isDone(), () -> "the server ended before it listened: " + serverErr);
            Thread.sleep(20);
        }
        List<String> client = cons(name, common);
        client.addAll(List.of("-c", "3", "-n", "40", "-s", "64,65536", "--warmup", "0", LabSelection.address(sel)));
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = Main.run(client.toArray(String[]::new), print(out), print(err));
        String report = out.toString(StandardCharsets.UTF_8);
        assertEquals(CliArgs.OK, status, report + err);
        assertEquals(CliArgs.OK, server.get(60, TimeUnit.SECONDS), serverOut + "\n" + serverErr);
        assertTrue(report.contains(" Device         : " + sel.device().name()), report);
        assertTrue(report.contains(" Connections    : 3, 4 requests outstanding on each, 40 requests each"), report);
        List<String> rows = report.lines().filter(l -> l.matches(" (64|65536) +120 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ *"))
                .toList();
        assertEquals(2, rows.size(), report);
    }

    private static List<String> cons(String head, List<String> tail) {
        List<String> l = new ArrayList<>();
        l.add(head);
        l.addAll(tail);
        return l;
    }

    private static PrintStream print(ByteArrayOutputStream bytes) {
        return new PrintStream(bytes, true, StandardCharsets.UTF_8);
    }
}
