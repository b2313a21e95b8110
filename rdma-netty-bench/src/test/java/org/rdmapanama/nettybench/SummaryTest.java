package org.rdmapanama.nettybench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's case list and CSV arithmetic, and the report's medians and ratios. */
class SummaryTest {
    @Test
    void theDefaultsAreTwelveCasesAndAGivenListReplacesThem() {
        ClientCommand d = new ClientCommand();
        new CommandLine(d).parseArgs();
        assertEquals(12, d.cases().size());
        assertEquals(new Result.Case(64, 1, 1), d.cases().getFirst());
        assertEquals(new Result.Case(65536, 16, 16), d.cases().getLast());
        ClientCommand one = new ClientCommand();
        new CommandLine(one).parseArgs("-s", "1024", "-c", "4", "-w", "2,8");
        assertEquals(List.of(new Result.Case(1024, 4, 2), new Result.Case(1024, 4, 8)), one.cases());
        assertEquals(List.of(new Result.Case(64, 1, 1), new Result.Case(1024, 1, 1), new Result.Case(65536, 1, 1),
                new Result.Case(64, 16, 16)), ClientCommand.warmUpCases(d.cases()));
        ClientCommand bad = new ClientCommand();
        new CommandLine(bad).parseArgs("-s", "4");
        assertThrows(IllegalArgumentException.class, bad::cases);
    }

    @Test
    void aResultIsRatesAndCpuPerMessage() {
        Result r = Result.of("channel", new Result.Case(64, 1, 1), 20_000, 2_000_000_000L, 40_000, 90_000, 1_000_000_000L);
        assertEquals(10_000, r.msgsPerSec(), 1e-9);
        assertEquals(40, r.p50Us(), 1e-9);
        assertEquals(90, r.p99Us(), 1e-9);
        assertEquals(50, r.cpuUsPerMsg(), 1e-9); // 1 s of CPU over 20,000 messages
        assertEquals("channel,64,1,1,20000,2.0000,40.00,90.00,10000.0,50.000", r.csv());
    }

    @Test
    void theReportTakesMediansAndRatiosAgainstTheChannel() throws Exception {
        List<String> header = List.of("device", "transport", "round", "series", "bytes", "connections", "window",
                "messages", "seconds", "p50_us", "p99_us", "msgs_per_s", "cpu_us_per_msg");
        List<String[]> rows = List.of(
                "rxe0,RoCEv2,1,channel,64,1,1,100,1,10,20,1000,5".split(","),
                "rxe0,RoCEv2,2,channel,64,1,1,100,1,30,40,3000,5".split(","),
                "rxe0,RoCEv2,3,channel,64,1,1,100,1,20,30,2000,5".split(","),
                "rxe0,RoCEv2,1,netty-rdma,64,1,1,100,1,30,60,1000,9".split(","),
                "rxe0,RoCEv2,2,netty-rdma,64,1,1,100,1,50,60,1800,11".split(","));
        Summary s = new Summary(rows, header);
        Result.Case c = new Result.Case(64, 1, 1);
        assertEquals(20, s.cell("rxe0", "channel", c).stat(Summary.Metric.P50).median(), 1e-9);
        assertEquals(40, s.cell("rxe0", "netty-rdma", c).stat(Summary.Metric.P50).median(), 1e-9); // even count: mean of two
        assertEquals(2.0, s.ratio("rxe0", c, Summary.Metric.P50), 1e-9);
        assertEquals(0.7, s.ratio("rxe0", c, Summary.Metric.RATE), 1e-9);
        assertEquals(List.of("channel", "netty-rdma"), s.series);
        String table = s.table("2026-12-07");
        assertTrue(table.contains("rxe0     64 B c1 w1             2.00     no         0.70     no"), table);
        assertTrue(s.csv().contains("rxe0,RoCEv2,channel,64,1,1,3,20.000,10.000,30.000"), s.csv());
    }
}
