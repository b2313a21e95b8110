package org.rdmapanama.bench.report;

import java.util.Arrays;
import java.util.Collection;
import java.util.OptionalDouble;

/** Median and min..max of one side of one case over its rounds. */
public record Stats(int n, double median, double min, double max) {

    public Stats {
        if (n < 1) throw new IllegalArgumentException("no values");
    }

    /** The median (mean of the two middle values for an even count), min and max of {@code values}. */
    public static Stats of(Collection<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (v.length == 0) throw new IllegalArgumentException("no values");
        int n = v.length;
        double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        return new Stats(n, median, v[0], v[n - 1]);
    }

    public static Stats of(double... values) {
        return of(Arrays.stream(values).boxed().toList());
    }

    /**
     * A measured value, or empty for what a run prints when it has none: perftest's
     * {@code inf}, an empty field, NaN or infinities. Such rounds are skipped, not counted.
     */
    public static OptionalDouble parse(String field) {
        try {
            double d = Double.parseDouble(field.strip());
            return Double.isFinite(d) ? OptionalDouble.of(d) : OptionalDouble.empty();
        } catch (NumberFormatException e) {
            return OptionalDouble.empty();
        }
    }
}
