package org.rdmapanama.bench.report;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SideBySideTest {
    private static Comparison row(String test) {
        return new Comparison("rxe0", "RoCEv2", List.of(test, "64"), test + " 64 B", Metric.of("t_typical", "usec"),
                Stats.of(1, 2, 3), Stats.of(2, 3, 4));
    }

    @Test
    void aRunAgainstSeveralProgramsDoesNotCallThemAllPerftest() {
        String[] names = SideBySide.names(SideBySide.Kind.PERFTEST,
                List.of(row("channel_lat/ib_send_lat"), row("channel_lat/tcp_lat"), row("channel_lat/rstream")));
        assertEquals("the program after the slash", names[1]);
        assertEquals("the program before the slash (Java)", names[2]);
    }

    @Test
    void perftestAgainstItsPortKeepsItsNames() {
        String[] names = SideBySide.names(SideBySide.Kind.PERFTEST, List.of(row("write_lat"), row("channel_lat/tcp_lat")));
        assertEquals("native perftest", names[1]);
        assertEquals("Java (rdma-bench)", names[2]);
    }
}
