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
     * "within spread" when Java/native differs from 1 by less than the larger relative spread of
     * the two sides (such a difference is noise under TCG, not a finding), else "java better" or
     * "java worse" by the metric's direction.
     */
    public String verdict() {
        if (nat == null || java == null) return "incomplete: no " + (nat == null ? "native" : "java") + " runs";
        if (nat.n() < MIN_ROUNDS || java.n() < MIN_ROUNDS) return "too few rounds to judge (needs " + MIN_ROUNDS + " per side)";
        double r = ratio();
        double spread = Math.max(nat.relativeSpread(), java.relativeSpread());
        if (Math.abs(r - 1) <= spread) return "within spread";
        return (metric.lowerIsBetter() ? r < 1 : r > 1) ? "java better" : "java worse";
    }
}
