package org.rdmapanama.bench.message;

import org.junit.jupiter.api.Test;
import org.rdmapanama.bench.BenchRun;
import org.rdmapanama.bench.message.MessageBenchOptions.Kind;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The message benchmarks' command lines (channel_* and tcp_*), their header and the request/response row. */
class MessageBenchCliTest {
    private static String error(Kind kind, boolean tcp, String... args) {
        return assertThrows(IllegalArgumentException.class, () -> MessageBenchOptions.parse(kind, tcp, args)).getMessage();
    }

    @Test
    void rpcDefaultsAreFourConnectionsOfEightOutstanding() {
        MessageBenchOptions o = MessageBenchOptions.parse(Kind.RPC, false, new String[] {"10.77.0.1"});
        assertEquals(4, o.connections);
        assertEquals(8, o.outstanding);
        assertEquals(1000, o.iters);
        assertEquals(32, o.window);
        assertEquals(List.of(64, 4096, 65536, 1048576), o.sizes());
        assertEquals(MessageBenchOptions.CHANNEL_PORT, o.port);
        assertEquals("10.77.0.1", o.server);
    }

    @Test
    void rpcTakesConnectionsOutstandingSizesAndWindow() {
        MessageBenchOptions o = MessageBenchOptions.parse(Kind.RPC, false,
                new String[] {"-c", "2", "-w", "64", "-s", "8,4194304", "-n", "100", "-p", "19501", "-d", "siw0"});
        assertEquals(2, o.connections);
        assertEquals(64, o.outstanding);
        assertEquals(64, o.window, "the channel's window grows to W");
        assertEquals(List.of(8, 4194304), o.sizes());
        assertEquals(4194304, o.largest());
        assertEquals(8, o.smallest());
        assertEquals(19501, o.port);
        assertNull(o.server);
        assertEquals(64, MessageBenchOptions.parse(Kind.RPC, false, new String[] {"-w", "4", "--window", "64"}).window);
        assertEquals(8192, MessageBenchOptions.parse(Kind.RPC, false, new String[] {"-w", "4096", "-n", "4096"})
                .channelOptions().sendQueueLimit(), "room to queue W sends");
    }

    @Test
    void latAndBwKeepTheirChannelWindowFlag() {
        MessageBenchOptions o = MessageBenchOptions.parse(Kind.LAT, false, new String[] {"-w", "16", "--slot", "4096"});
        assertEquals(16, o.window);
        assertEquals(List.of(64), o.sizes());
        assertEquals(List.of(65536), MessageBenchOptions.parse(Kind.BW, false, new String[0]).sizes());
        assertEquals(5000, MessageBenchOptions.parse(Kind.BW, false, new String[0]).iters);
        assertEquals(20, MessageBenchOptions.parse(Kind.BW, false, new String[] {"-a"}).sizes().size()); // 8 B .. 4 MiB
    }

    @Test
    void tcpTakesTheSameFlagsButNoChannelOnes() {
        MessageBenchOptions o = MessageBenchOptions.parse(Kind.RPC, true, new String[] {"-c", "3", "-w", "2", "-s", "64"});
        assertEquals(3, o.connections);
        assertEquals(2, o.outstanding);
        assertEquals(MessageBenchOptions.TCP_PORT, o.port);
        assertEquals("unknown option '--slot'", error(Kind.LAT, true, "--slot", "4096"));
        assertEquals("unknown option '-e'", error(Kind.RPC, true, "-e"));
        assertEquals("unknown option '-w'", error(Kind.LAT, true, "-w", "4"));
        assertEquals("unknown option '-c'", error(Kind.BW, false, "-c", "4"));
    }

    @Test
    void badInputIsNamed() {
        assertEquals("option -c must be 1..1024, got 0", error(Kind.RPC, false, "-c", "0"));
        assertEquals("option -w must be 1..4096, got 0", error(Kind.RPC, true, "-w", "0"));
        assertEquals("option -s must be 8..4194304, got 8388608", error(Kind.RPC, false, "-s", "64,8388608"));
        assertEquals("option -s must be 8..1073741824, got 4", error(Kind.LAT, true, "-s", "4"));
        assertTrue(error(Kind.RPC, false, "-s", "64,").contains("-s"));
        assertEquals("-n (10 requests per connection) must be at least -w (16 outstanding)",
                error(Kind.RPC, false, "-n", "10", "-w", "16"));
        assertEquals("-a and -s exclude each other", error(Kind.BW, true, "-a", "-s", "64"));
        assertTrue(error(Kind.LAT, false, "--slot", "1000").contains("power of two"));
        assertTrue(error(Kind.RPC, false, "a", "b").contains("one operand at most"));
    }

    @Test
    void throughMainUsageErrorsExit2AndHelpExits0() {
        for (String name : List.of("channel_rpc", "tcp_lat", "tcp_bw", "tcp_rpc")) {
            BenchRun r = BenchRun.of(name, "-n", "x");
            assertEquals(2, r.status(), r.err());
            assertTrue(r.err().startsWith("rdma-bench " + name + ": option -n needs a number"), r.err());
            assertTrue(r.err().contains("usage: rdma-bench " + name), r.err());
            r = BenchRun.of(name, "-h");
            assertEquals(0, r.status());
            assertTrue(r.out().startsWith("usage: rdma-bench " + name), r.out());
        }
        BenchRun r = BenchRun.of("tcp_rpc", "-c", "0");
        assertEquals("rdma-bench tcp_rpc: option -c must be 1..1024, got 0", r.err().lines().findFirst().orElseThrow());
    }

    @Test
    void anUnknownDeviceExits2Naming() {
        BenchRun r = BenchRun.of("tcp_lat", "-d", "nosuch0", "-p", "1");
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().startsWith("rdma-bench tcp_lat: "), r.err());
        assertTrue(r.err().contains("nosuch0") || r.err().contains("no RDMA device"), r.err());
    }

    @Test
    void headerAndRowLineUpWithTheColumns() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        MessageBench.header(out, Kind.RPC, MessageBench.title("TCP", Kind.RPC), "rxe0", "TCP over java.nio",
                "Connections", "4, 8 requests outstanding on each, 1000 requests each");
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(List.of(
                "---------------------------------------------------------------------------------------",
                "                    TCP request/response Test",
                " Device         : rxe0",
                " Transport      : TCP over java.nio",
                " Connections    : 4, 8 requests outstanding on each, 1000 requests each",
                "---------------------------------------------------------------------------------------",
                MessageBench.RESULT_FMT_RPC), lines);
        String row = RequestLatencies.row(65536, 4000, 12_345, 99_999, 2_000_000_000L);
        assertEquals(" 65536      4000           12.35          100.00       0.002000             125.00   ", row);
        // Each figure starts under its column's header.
        String[] heads = MessageBench.RESULT_FMT_RPC.replace("BW average", "BW_average").trim().split("\\s+");
        String[] cells = row.trim().split("\\s+");
        assertEquals(heads.length, cells.length);
    }

    @Test
    void latenciesAreRecordedAndClamped() {
        RequestLatencies l = new RequestLatencies();
        for (int i = 1; i <= 100; i++) {
            l.record(i * 1000L);
        }
        l.record(-5); // a clock step: clamped, not thrown on the loop thread
        l.record(RequestLatencies.HIGHEST * 2);
        assertEquals(102, l.count());
        assertEquals(50_000, l.at(50), 50);
        assertEquals(100_000, l.at(99), 100); // the 101st of 102
        l.reset();
        assertEquals(0, l.count());
    }
}
