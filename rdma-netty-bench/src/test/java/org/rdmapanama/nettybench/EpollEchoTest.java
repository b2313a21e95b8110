package org.rdmapanama.nettybench;

import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import picocli.CommandLine;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The epoll sides end to end on 127.0.0.1, through the command lines a user types: a server, then a client
 * that measures two short cases, writes its CSV and stops the server; the report reads it back.
 */
class EpollEchoTest {
    @ParameterizedTest
    @EnumSource(value = Side.class, names = {"NETTY_EPOLL", "GRPC_EPOLL"})
    void aClientMeasuresAndStopsItsServer(Side side, @TempDir Path dir) throws Exception {
        measures(List.of(side), dir);
    }

    @Test
    void oneClientMeasuresSeveralSidesAndStopsEach(@TempDir Path dir) throws Exception {
        measures(List.of(Side.NETTY_EPOLL, Side.GRPC_EPOLL), dir);
    }

    private static void measures(List<Side> sides, Path dir) throws Exception {
        assumeTrue(Epoll.isAvailable(), () -> "epoll: " + Epoll.unavailabilityCause());
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String[] common = {"--side", String.join(",", sides.stream().map(s -> s.label).toList()), "--address",
                "127.0.0.1", "-p", Integer.toString(port)};
        List<String> series = sides.stream().flatMap(s -> s.series().stream()).toList();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(
                () -> new CommandLine(new Main()).execute(cat(new String[] {"server"}, common)));
        Path csv = dir.resolve("raw-client.csv");
        int rc = -1;
        for (int attempt = 0; attempt < 50 && rc != 0; attempt++) { // until the server listens
            Thread.sleep(100);
            rc = new CommandLine(new Main()).execute(cat(new String[] {"client"}, common, new String[] {
                    "-s", "64,4096", "-c", "2", "-w", "4", "--seconds", "0.2", "--case-warmup", "0",
                    "--warmup", "0", "--csv", csv.toString(), "127.0.0.1"}));
        }
        assertEquals(0, rc);
        assertEquals(0, server.get(30, TimeUnit.SECONDS));
        List<String> lines = Files.readAllLines(csv);
        assertEquals(String.join(",", Result.COLUMNS), lines.getFirst());
        assertEquals(1 + 2 * series.size(), lines.size(), String.join("\n", lines));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            assertTrue(series.contains(f[0]), line);
            assertEquals("2", f[2]);
            assertEquals("4", f[3]);
            assertTrue(Long.parseLong(f[4]) >= 8, line); // at least the first window on each connection
            assertTrue(Double.parseDouble(f[6]) > 0 && Double.parseDouble(f[7]) >= Double.parseDouble(f[6]), line);
            assertTrue(Double.parseDouble(f[9]) > 0, line);
        }
    }

    private static String[] cat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }
}
