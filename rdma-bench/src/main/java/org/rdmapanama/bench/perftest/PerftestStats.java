package org.rdmapanama.bench.perftest;

import java.util.Arrays;

/**
 * perftest's result arithmetic, on nanosecond timestamps instead of TSC
 * cycles ({@link PerftestRows} formats the figures). Pure functions:
 * unit-tested on the host.
 */
public final class PerftestStats {
    private PerftestStats() {}

    /** perftest drops the two largest samples before its statistics (LAT_MEASURE_TAIL). */
    static final int LAT_MEASURE_TAIL = 2;

    /** The figures of one latency row, in microseconds. */
    public record Latency(long size, long iters, double min, double max, double typical, double avg, double stdev,
                   double p99, double p999) {}

    /**
     * perftest's {@code print_report_lat}: the deltas between consecutive post
     * timestamps ({@code iters - 1} of them), divided by 2 for ping-pong tests
     * (half the round trip) and by 1 for RDMA Read and atomics. Sorted, the 2
     * largest dropped, then: min = first, max = the first dropped-adjacent entry
     * ({@code delta[n]}), typical = median (perftest's get_median on integer
     * time), avg over the n kept, stdev from per-sample differences truncated to
     * whole microseconds as perftest's {@code int} arithmetic does, and the
     * percentiles at {@code ceil(n * 0.99)} and {@code ceil(n * 0.999)}.
     *
     * @param posted    timestamps in ns, {@code iters} of them (sorted copy made; the array is not changed)
     * @param rttFactor 2 for write/send ping-pong, 1 for read/atomic
     */
    public static Latency latency(long size, long[] posted, int iters, int rttFactor) {
        int measured = iters - 1;
        if (measured - LAT_MEASURE_TAIL < 1) {
            throw new IllegalArgumentException("need at least " + (LAT_MEASURE_TAIL + 2) + " iterations, got " + iters);
        }
        long[] delta = new long[measured];
        for (int i = 0; i < measured; i++) {
            delta[i] = posted[i + 1] - posted[i];
        }
        Arrays.sort(delta);
        int n = measured - LAT_MEASURE_TAIL;
        double quotient = 1000.0 * rttFactor; // ns -> us, per direction
        long median = (n - 1) % 2 != 0 ? (delta[n / 2] + delta[n / 2 - 1]) / 2 : delta[n / 2];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += delta[i] / quotient;
        }
        double avg = sum / n;
        double var = 0;
        for (int i = 0; i < n; i++) {
            int diff = (int) (avg - delta[i] / quotient); // perftest: int temp_var, int pow_var
            var += (double) diff * diff;
        }
        int i99 = (int) Math.ceil(n * 0.99);
        int i999 = (int) Math.ceil(n * 0.999);
        return new Latency(size, iters, delta[0] / quotient, delta[n] / quotient, median / quotient, avg,
                Math.sqrt(var / n), delta[i99] / quotient, delta[i999] / quotient);
    }

    /** A duration run's latency figures: the average in microseconds and transactions per second. */
    record LatencyDuration(long size, long iters, double avg, double tps) {}

    /** perftest's {@code print_report_lat_duration}: average over the sample window and transactions per second. */
    static LatencyDuration latencyDuration(long size, long iters, long sampleNanos, int rttFactor) {
        double usec = sampleNanos / 1000.0;
        double latency = iters == 0 ? 0 : usec / rttFactor / iters;
        double tps = usec == 0 ? 0 : iters / (usec / 1_000_000.0);
        return new LatencyDuration(size, iters, latency, tps);
    }

    /** One bandwidth row's figures: MB/s (2^20) or Gb/s, and millions of messages per second. */
    public record Bandwidth(long size, long iters, double peak, double avg, double msgRate) {}

    /**
     * perftest's {@code print_report_bw} for one QP without a post list:
     * average over first post to last completion; peak as the best
     * {@code (tcompleted[j] - tposted[i]) / (j - i + 1)} over each post i and
     * each signaled completion j after it (every {@code cqMod}-th WR, and the last).
     *
     * @param posted    post time of WR i (ns), or null for no peak (perftest's noPeak, as in duration mode)
     * @param completed completion time of signaled WR j (ns); only signaled entries are read
     * @param start     time of the first post (ns)
     * @param end       time of the last completion (ns)
     */
    public static Bandwidth bandwidth(long size, long iters, long[] posted, long[] completed, int cqMod, long start, long end,
                               boolean gbits) {
        double format = gbits ? 125_000_000.0 : 0x100000;
        double seconds = (end - start) / 1e9;
        double avg = seconds <= 0 ? 0 : size * (double) iters / seconds / format;
        double rate = seconds <= 0 ? 0 : iters / seconds / 1e6;
        double peak = 0;
        if (posted != null && iters > 0) {
            long best = Long.MAX_VALUE;
            int n = (int) iters;
            for (int i = 0; i < n; i++) {
                for (int j = roundUp(i + 1, cqMod) - 1; j < n; j += cqMod) {
                    long t = (completed[j] - posted[i]) / (j - i + 1);
                    if (t < best) {
                        best = t;
                    }
                }
                if (n % cqMod != 0) {
                    int j = n - 1;
                    long t = (completed[j] - posted[i]) / (j - i + 1);
                    if (t < best) {
                        best = t;
                    }
                }
            }
            peak = best <= 0 || best == Long.MAX_VALUE ? 0 : size / (best / 1e9) / format;
        }
        return new Bandwidth(size, iters, peak, avg, rate);
    }

    private static int roundUp(int value, int multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }
}
