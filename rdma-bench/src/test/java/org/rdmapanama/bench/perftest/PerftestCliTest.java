package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.BenchRun;
import org.junit.jupiter.api.Test;
import org.rdmapanama.bench.perftest.PerftestOptions.Verb;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The perftest subcommands without a device: flags, validation, statistics, report lines, the setup message. */
class PerftestCliTest {
    static PerftestOptions parse(PerftestOptions.Test t, String... args) {
        return PerftestOptions.parse(t, args);
    }

    @Test
    void defaultsAreperftests() {
        PerftestOptions o = parse(PerftestOptions.Test.WRITE_LAT);
        assertTrue(o.isServer());
        assertEquals(2, o.size);
        assertEquals(1000, o.iters);
        assertEquals(1, o.txDepth);
        assertEquals(18515, o.port);
        assertEquals(0, o.inline());

        assertEquals(5000, parse(PerftestOptions.Test.WRITE_BW).iters, "perftest's DEF_ITERS_WB");
        assertEquals(1000, parse(PerftestOptions.Test.READ_BW).iters);

        o = parse(PerftestOptions.Test.SEND_BW, "10.0.0.1");
        assertEquals(1000, o.iters);
        assertEquals("10.0.0.1", o.server);
        assertEquals(65536, o.size);
        assertEquals(128, o.txDepth);
        assertEquals(1, o.cqMod(), "above 8 KiB every WR is signaled");
        assertEquals(512, o.rxDepth());

        o = parse(PerftestOptions.Test.WRITE_BW, "-s", "4096", "-n", "50");
        assertEquals(50, o.txDepth, "tx depth is at most -n");
        assertEquals(50, o.cqMod(), "CQ moderation is at most the tx depth");

        o = parse(PerftestOptions.Test.ATOMIC_LAT);
        assertEquals(8, o.size);
        assertTrue(o.fetchAndAdd);
        assertEquals(Verb.ATOMIC, o.test.verb);
    }

    @Test
    void warmupFlags() {
        assertEquals(60, parse(PerftestOptions.Test.WRITE_LAT).warmupMaxSeconds);
        assertTrue(parse(PerftestOptions.Test.WRITE_LAT).warmup());
        assertEquals(5, parse(PerftestOptions.Test.WRITE_LAT, "--warmup=5").warmupMaxSeconds);
        assertFalse(parse(PerftestOptions.Test.WRITE_LAT, "--warmup", "0").warmup());
        assertFalse(parse(PerftestOptions.Test.WRITE_LAT, "--no-warmup").warmup());
        assertFalse(parse(PerftestOptions.Test.WRITE_LAT, "-D", "5").warmup(), "a -D run has no warm-up, as perftest's");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse(PerftestOptions.Test.WRITE_LAT, "--warmup", "-1"));
        assertTrue(e.getMessage().contains("--warmup"), e.getMessage());
    }

    @Test
    void shortAndLongFlags() {
        PerftestOptions o = parse(PerftestOptions.Test.SEND_LAT, "-d", "rxe0", "-i", "1", "-x", "3", "-s", "64", "-n", "200",
                "-R", "-I", "64", "-q", "1", "-F", "-p", "20000", "--transport=rocev2", "host");
        assertEquals("rxe0", o.device);
        assertEquals(3, o.gidIndex);
        assertEquals(64, o.size);
        assertEquals(200, o.iters);
        assertTrue(o.rdmaCm);
        assertEquals(64, o.inline());
        assertEquals(20000, o.port);
        assertEquals("rocev2", o.transport);
        assertEquals(200, o.rxDepth());

        o = parse(PerftestOptions.Test.WRITE_BW, "--ib-dev=siw0", "--size=1024", "--iters", "100", "--rdma_cm",
                "--gid-index=0", "--port=7000", "--report_gbits", "--tx-depth=16");
        assertEquals("siw0", o.device);
        assertEquals(1024, o.size);
        assertEquals(100, o.iters);
        assertTrue(o.rdmaCm && o.reportGbits);
        assertEquals(16, o.txDepth);

        o = parse(PerftestOptions.Test.READ_LAT, "-a");
        assertArrayEquals(new int[] {2, 4, 8}, Arrays.copyOf(o.sizes(), 3));
        assertEquals(23, o.sizes().length);
        assertEquals(1 << 23, o.sizes()[22]);
        assertEquals(0, o.inline(), "no inline for RDMA Read");

        o = parse(PerftestOptions.Test.WRITE_LAT, "-D", "10");
        assertEquals(10, o.duration);

        // perftest 4.5's peak rule: computed up to 20,000 iterations, unless -N or duration mode
        assertFalse(parse(PerftestOptions.Test.WRITE_BW, "-n", "20000").noPeak());
        assertTrue(parse(PerftestOptions.Test.WRITE_BW, "-n", "20001").noPeak());
        assertTrue(parse(PerftestOptions.Test.WRITE_BW, "-N").noPeak());
        assertTrue(parse(PerftestOptions.Test.SEND_BW, "--noPeak", "-n", "100").noPeak());
        assertTrue(parse(PerftestOptions.Test.WRITE_BW, "-D", "10").noPeak());
        IllegalArgumentException latency = assertThrows(IllegalArgumentException.class,
                () -> parse(PerftestOptions.Test.WRITE_LAT, "-N"));
        assertTrue(latency.getMessage().contains("NoPeak only valid for BW tests"), latency.getMessage());

        assertNull(parse(PerftestOptions.Test.WRITE_LAT, "-h"));
    }

    @Test
    void badFlagsAreOneLineErrors() {
        String[][] bad = {
                {"--bogus"}, {"-s"}, {"-s", "abc"}, {"-s", "0"}, {"-s", "8388609"}, {"-n", "4"}, {"-q", "2"},
                {"-p", "70000"}, {"--transport=carrier-pigeon"}, {"-a", "-s", "64"}, {"-D", "3"}, {"-D", "10", "-n", "100"},
                {"-D", "10", "-a"}, {"-t", "4"}, {"a", "b"}, {"--size"}, {"-R=1"},
        };
        for (String[] args : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> parse(PerftestOptions.Test.WRITE_LAT, args), String.join(" ", args));
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.ATOMIC_LAT, "-s", "16"));
        assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.ATOMIC_LAT, "-A", "XOR"));
        assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.WRITE_LAT, "-A", "CMP_AND_SWAP"));
        // -q as perftest takes it: bandwidth tests only; send_bw and more than a byte's worth are ours to refuse.
        assertEquals("option -q: Multiple QPs only available on bw tests", assertThrows(IllegalArgumentException.class,
                () -> parse(PerftestOptions.Test.WRITE_LAT, "-q", "2")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.SEND_BW, "-q", "4"))
                .getMessage().contains("send_bw runs 1 QP"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.WRITE_BW, "-q", "256"))
                .getMessage().contains("at most 255 QPs"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse(PerftestOptions.Test.READ_BW, "-q", "200", "-n", "1000000")).getMessage().contains("-n times -q"));
        assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.WRITE_BW, "-q", "0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse(PerftestOptions.Test.WRITE_BW, "-q", "2",
                "-D", "10")).getMessage().contains("-D runs 1 QP"));
        assertEquals(4, parse(PerftestOptions.Test.WRITE_BW, "-q", "4").numQps);
        assertEquals(255, parse(PerftestOptions.Test.READ_BW, "--qp=255").numQps);
    }

    @Test
    void badFlagsThroughMainExit2WithUsageAndNoStackTrace() {
        BenchRun r = BenchRun.of("write_lat", "-s", "banana");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("rdma-bench write_lat: option -s needs a number, got 'banana'"), r.err());
        assertTrue(r.err().contains("Usage:"), r.err());
        assertFalse(r.err().contains("Exception"), r.err());

        r = BenchRun.of("send_bw", "-h");
        assertEquals(0, r.status());
        assertTrue(r.out().contains("--report_gbits"), r.out());
    }

    /**
     * A known sample: posts at cumulative times giving 12 deltas of
     * 10..120 us (shuffled). perftest sorts, drops the 2 largest (110, 120),
     * keeps n = 10: min 10, max delta[10] = 110, median of 10 (n-1 odd) =
     * (50+60)/2 = 55, avg 55, percentiles at ceil(9.9) = 10 and ceil(9.99) = 10.
     * With rtt factor 2 every figure halves.
     */
    @Test
    void latencyStatisticsAsPerftest() {
        long[] deltasUs = {70, 10, 120, 30, 50, 90, 20, 110, 40, 60, 100, 80};
        long[] posted = new long[deltasUs.length + 1];
        for (int i = 0; i < deltasUs.length; i++) {
            posted[i + 1] = posted[i] + deltasUs[i] * 1000;
        }
        PerftestStats.Latency l = PerftestStats.latency(2, posted, posted.length, 1);
        assertEquals(10.0, l.min());
        assertEquals(110.0, l.max());
        assertEquals(55.0, l.typical());
        assertEquals(55.0, l.avg());
        // perftest's int arithmetic: diffs 45, 35, ..., -45 are exact here: sqrt(mean of squares) = sqrt(825)
        assertEquals(Math.sqrt(825), l.stdev(), 1e-9);
        assertEquals(110.0, l.p99());
        assertEquals(110.0, l.p999());
        assertEquals(13, l.iters());

        PerftestStats.Latency half = PerftestStats.latency(2, posted, posted.length, 2);
        assertEquals(5.0, half.min());
        assertEquals(27.5, half.typical());
        assertEquals(55.0, half.max());
        // halves: diffs 22.5 -> 22 (truncated like C's int), 17.5 -> 17, ...
        double sum = 0;
        for (int d : new int[] {22, 17, 12, 7, 2, -2, -7, -12, -17, -22}) {
            sum += d * d;
        }
        assertEquals(Math.sqrt(sum / 10), half.stdev(), 1e-9);
    }

    @Test
    void medianOfAnOddCountIsTheMiddle() {
        // 12 deltas -> n = 9 after the tail: (n - 1) % 2 == 0 picks delta[4]
        long[] posted = new long[12];
        for (int i = 1; i < posted.length; i++) {
            posted[i] = posted[i - 1] + i * 1000L; // deltas 1..11 us
        }
        PerftestStats.Latency l = PerftestStats.latency(2, posted, posted.length, 1);
        assertEquals(5.0, l.typical());
        assertEquals(1.0, l.min());
        assertEquals(10.0, l.max());
        assertEquals(5.0, l.avg());
        assertThrows(IllegalArgumentException.class, () -> PerftestStats.latency(2, new long[3], 3, 1));
    }

    @Test
    void bandwidthAsPerftest() {
        // 4 WRs of 1 MiB, each signaled (cqMod 1): posted at 0,0,0,0 ms, completed at 1,2,3,4 ms.
        long ms = 1_000_000;
        long[] posted = {0, 0, 0, 0};
        long[] completed = {ms, 2 * ms, 3 * ms, 4 * ms};
        PerftestStats.Bandwidth b = PerftestStats.bandwidth(1 << 20, 4, posted, completed, 1, 0, 4 * ms, false);
        assertEquals(1000.0, b.avg(), 1e-9);       // 4 MiB in 4 ms
        assertEquals(1000.0, b.peak(), 1e-9);      // best (c[j] - p[i]) / (j - i + 1) = 1 ms per MiB
        assertEquals(0.001, b.msgRate(), 1e-12);   // 1000 messages/s
        PerftestStats.Bandwidth g = PerftestStats.bandwidth(1 << 20, 4, posted, completed, 1, 0, 4 * ms, true);
        assertEquals((1 << 20) * 8 / 1e9 * 1000, g.avg(), 1e-9);
        // cqMod 2: only entries 1 and 3 are read; the others may hold anything.
        long[] sparse = {-1, 2 * ms, -1, 4 * ms};
        assertEquals(1000.0, PerftestStats.bandwidth(1 << 20, 4, posted, sparse, 2, 0, 4 * ms, false).peak(), 1e-9);
        assertEquals(0.0, PerftestStats.bandwidth(1 << 20, 4, null, null, 2, 0, 4 * ms, false).peak());
    }

    @Test
    void reportLinesMatchPerftestsFormat() {
        assertEquals(" 2       200          11.64          8127.96      3988.47  \t       3404.20     \t1272.26\t\t8049.75 \t\t8127.96",
                PerftestRows.row(new PerftestStats.Latency(2, 200, 11.64, 8127.96, 3988.47, 3404.20, 1272.26, 8049.75, 8127.96)));
        assertEquals(" 65536      500              45.94              18.12  \t\t   0.000290",
                PerftestRows.row(new PerftestStats.Bandwidth(65536, 500, 45.94, 18.12, 0.000290)));
        assertEquals("0000", PerftestRows.cHex(0, 4));
        assertEquals("0x0011", PerftestRows.cHex(0x11, 6));
        assertEquals("0x638f8", PerftestRows.cHex(0x638f8, 6));
        assertEquals("0x0003bc", PerftestRows.cHex(0x3bc, 8));
        assertEquals("0x00563be1754000", PerftestRows.cHex(0x563be1754000L, 16));
        byte[] gid = new byte[16];
        gid[10] = (byte) 255;
        gid[11] = (byte) 255;
        gid[12] = 10;
        gid[13] = 77;
        gid[15] = 1;
        assertEquals(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:01", PerftestRows.gidLine(gid));
    }

    @Test
    void setupMessageRoundTripsAndRejectsMismatches() {
        PerftestOptions o = parse(PerftestOptions.Test.WRITE_LAT, "-n", "200");
        PerftestWire mine = PerftestWire.of(o, 192);
        byte[] bytes = mine.encode();
        assertEquals(20, bytes.length);
        assertEquals(mine, PerftestWire.decode(bytes, mine, 192));
        // Trailing zeros are accepted; other trailing bytes are not.
        assertEquals(mine, PerftestWire.decode(Arrays.copyOf(bytes, 24), mine, 192));
        byte[] junk = Arrays.copyOf(bytes, 24);
        junk[23] = 1;
        assertThrows(IllegalArgumentException.class, () -> PerftestWire.decode(junk, mine, 192));
        assertThrows(IllegalArgumentException.class, () -> PerftestWire.decode(Arrays.copyOf(bytes, 16), mine, 192));
        assertThrows(IllegalArgumentException.class, () -> PerftestWire.decode(bytes, mine, 1 << 20));

        PerftestWire otherIters = new PerftestWire(mine.test(), mine.flags(), 1, 2, 100, 192);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PerftestWire.decode(otherIters.encode(), mine, 192)).getMessage().contains("-n"));
        PerftestWire otherTest = new PerftestWire(PerftestOptions.Test.SEND_BW.ordinal(), mine.flags(), 1, 2, 200, 192);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PerftestWire.decode(otherTest.encode(), mine, 192)).getMessage().contains("send_bw"));
        PerftestWire otherQps = new PerftestWire(mine.test(), mine.flags(), 4, 2, 200, 192);
        assertEquals("peer runs 4 QPs, here 1: run both sides with the same -q", assertThrows(IllegalArgumentException.class,
                () -> PerftestWire.decode(otherQps.encode(), mine, 192)).getMessage());
        byte[] badMagic = bytes.clone();
        badMagic[0] = 'X';
        assertThrows(IllegalArgumentException.class, () -> PerftestWire.decode(badMagic, mine, 192));
        byte[] oldVersion = bytes.clone();
        oldVersion[2] = 4;
        assertThrows(IllegalArgumentException.class, () -> PerftestWire.decode(oldVersion, mine, 192));
    }

    private static String error(Runnable parse) {
        return assertThrows(IllegalArgumentException.class, parse::run).getMessage();
    }

    @Test
    void perftestNumbersReadLikeStrtol() {
        PerftestOptions o = PerftestCliTest.parse(PerftestOptions.Test.WRITE_BW, "-s", "0x1000", "--iters=010", "-t020");
        assertEquals(4096, o.size);
        assertEquals(8, o.iters, "a leading 0 is octal, as strtol(v, NULL, 0)");
        assertEquals(8, o.txDepth, "-t 020 is 16, then at most -n");
        assertEquals(64, PerftestCliTest.parse(PerftestOptions.Test.WRITE_LAT, "-s64").size);
        assertTrue(PerftestCliTest.parse(PerftestOptions.Test.WRITE_LAT, "-aR").rdmaCm, "grouped flags");
    }

    @Test
    void perftestErrorsNameTheFlagAsTyped() {
        PerftestOptions.Test t = PerftestOptions.Test.WRITE_LAT;
        assertEquals("option --size needs a number, got 'x'", error(() -> PerftestCliTest.parse(t, "--size=x")));
        assertEquals("option -s must be 1..8388608, got 0", error(() -> PerftestCliTest.parse(t, "-s", "0")));
        assertEquals("option -n needs a value", error(() -> PerftestCliTest.parse(t, "-n")));
        assertEquals("option --iters needs a value", error(() -> PerftestCliTest.parse(t, "--iters")));
        assertEquals("option -R takes no value", error(() -> PerftestCliTest.parse(t, "-R=1")));
        assertEquals("unknown option '--bogus'", error(() -> PerftestCliTest.parse(t, "--bogus")));
        assertEquals("option -d needs a non-empty value", error(() -> PerftestCliTest.parse(t, "-d", "")));
        assertTrue(error(() -> PerftestCliTest.parse(t, "--transport", "x")).startsWith("option --transport: "));
        assertEquals("option -A is for atomic_lat only", error(() -> PerftestCliTest.parse(t, "-A", "CMP_AND_SWAP")));
        assertFalse(PerftestCliTest.parse(PerftestOptions.Test.ATOMIC_LAT, "--atomic_type=CMP_AND_SWAP").fetchAndAdd);
        assertEquals(7, PerftestCliTest.parse(t, "-s", "3", "-s", "7").size, "the last of a repeated flag wins");
    }
}
