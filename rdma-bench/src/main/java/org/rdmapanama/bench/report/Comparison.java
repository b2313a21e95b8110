package org.rdmapanama.bench.report;

import java.util.List;

/**
 * One case on one device: native and Java over the rounds, either side null when none of its
 * runs gave a value.
 *
 * @param key the case's own columns in raw.csv (perftest: test, bytes; scale: connections)
 * @param label how the case reads in the table and the plot, e.g. {@code write_lat 2 B}
 */
public record Comparison(String device, String transport, List<String> key, String label, Metric metric,
                         Stats nat, Stats java) {

    /** Fewer rounds than this leave no spread to judge a difference by. */
    public static final int MIN_ROUNDS = 3;

    /** Java median / native median; NaN when a side is missing. */
    public double ratio() {
        return nat == null || java == null ? Double.NaN : java.median() / nat.median();
    }

    /**
     * "within spread" when the two sides' rounds overlap (min..max): then some round of each
     * side lies among the other's, and under TCG that is noise, not a finding. Else "java
     * better" or "java worse" by the metric's direction: every round of one side beat every
     * round of the other (with 3 rounds a side, chance alone does that 1 time in 10). Not the
     * ratio against the sides' relative spread: one noisy side would then hide even a gap of
     * several times.
     */
    public String verdict() {
        if (nat == null || java == null) return "incomplete: no " + (nat == null ? "native" : "java") + " runs";
        if (nat.n() < MIN_ROUNDS || java.n() < MIN_ROUNDS) return "too few rounds to judge (needs " + MIN_ROUNDS + " per side)";
        if (java.min() <= nat.max() && nat.min() <= java.max()) return "within spread";
        double r = ratio();
        return (metric.lowerIsBetter() ? r < 1 : r > 1) ? "java better" : "java worse";
    }
}
