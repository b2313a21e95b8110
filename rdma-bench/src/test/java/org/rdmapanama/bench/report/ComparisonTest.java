package org.rdmapanama.bench.report;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ComparisonTest {
    static final Metric LATENCY = Metric.of("t_typical", "usec");
    static final Metric BANDWIDTH = Metric.of("bw_average", "MB/sec");

    static Comparison of(Metric m, Stats nat, Stats java) {
        return new Comparison("rxe0", "RoCEv2", List.of("write_lat", "2"), "write_lat 2 B", m, nat, java);
    }

    @Test
    void overlappingRoundsAreWithinSpread() {
        Comparison c = of(LATENCY, Stats.of(9, 10, 11.5), Stats.of(11.4, 11.5, 11.6));
        assertEquals(1.15, c.ratio(), 1e-12);
        assertEquals("within spread", c.verdict());
        assertEquals("java worse", of(LATENCY, Stats.of(9, 10, 11), Stats.of(11.4, 11.5, 11.6)).verdict(),
                "every Java round slower than every native one");
    }

    @Test
    void aNoisySideDoesNotHideADifference() {
        // siw0 send_bw 2 B, Java client + native server, 2026-12-05: Java's relative spread 0.88 > |0.22 - 1|
        Comparison c = of(BANDWIDTH, Stats.of(0.0362, 0.0372, 0.0416), Stats.of(0.0060, 0.0081, 0.0131));
        assertEquals("java worse", c.verdict());
    }

    @Test
    void outsideTheSpreadTheMetricsDirectionDecides() {
        Stats slow = Stats.of(19, 20, 21), fast = Stats.of(9.5, 10, 10.5);
        assertEquals("java worse", of(LATENCY, fast, slow).verdict());
        assertEquals("java better", of(LATENCY, slow, fast).verdict());
        // Bandwidth: higher is better.
        assertEquals("java better", of(BANDWIDTH, fast, slow).verdict());
        assertEquals("java worse", of(BANDWIDTH, slow, fast).verdict());
    }

    @Test
    void fewerThanThreeRoundsOnEitherSideAreNotJudged() {
        Stats three = Stats.of(9.5, 10, 10.5);
        Stats two = Stats.of(20, 20.2);
        Stats one = Stats.of(20.1);
        for (Comparison c : List.of(of(LATENCY, three, two), of(LATENCY, one, three), of(LATENCY, one, one))) {
            assertTrue(c.verdict().startsWith("too few rounds to judge"), c.verdict());
        }
        assertEquals("java worse", of(LATENCY, three, Stats.of(20, 20.1, 20.2)).verdict());
    }

    @Test
    void aMissingSideIsIncomplete() {
        Comparison c = of(LATENCY, null, Stats.of(1, 2, 3));
        assertTrue(Double.isNaN(c.ratio()));
        assertEquals("incomplete: no native runs", c.verdict());
        assertEquals("incomplete: no java runs", of(LATENCY, Stats.of(1, 2, 3), null).verdict());
    }

    @Test
    void anUnknownMetricIsAnErrorNotAGuessAtItsDirection() {
        assertTrue(LATENCY.lowerIsBetter());
        assertFalse(BANDWIDTH.lowerIsBetter());
        assertFalse(Metric.of("session_rate", "conn/s").lowerIsBetter());
        var e = assertThrows(IllegalArgumentException.class, () -> Metric.of("t_max", "usec"));
        assertTrue(e.getMessage().contains("t_max"));
    }

    @Test
    void plotTitlesPrintMetricNamesAsTheyAre() {
        String t = LATENCY.title("rxe0", "RoCEv2");
        assertEquals("rxe0 (RoCEv2): latency, t_typical [usec], lower is better", t);
        assertFalse(t.contains("\\"), t);
    }
}
