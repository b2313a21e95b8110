package org.rdmapanama.bench.message;

import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * The latencies of one request/response run, issue to reply, in an HdrHistogram of nanoseconds (3 significant
 * digits, up to 60 s): {@link #record} allocates nothing, so the loop thread that receives the replies records
 * them. Not thread-safe: one thread records, and reads after the run.
 */
public final class RequestLatencies {
    static final long HIGHEST = 60_000_000_000L;

    private final Histogram histogram = new Histogram(1, HIGHEST, 3);

    public void reset() {
        histogram.reset();
    }

    /** Clamped to 1 ns .. 60 s: a value outside the histogram's range would throw on the loop thread. */
    public void record(long nanos) {
        histogram.recordValue(Math.clamp(nanos, 1, HIGHEST));
    }

    public long count() {
        return histogram.getTotalCount();
    }

    /** The recorded latency at {@code percentile} (0..100), in ns. */
    public long at(double percentile) {
        return histogram.getValueAtPercentile(percentile);
    }

    /** The row of a run of {@link #count()} requests of {@code size} bytes that took {@code nanos} from first issue to last reply. */
    public String row(int size, long nanos) {
        return row(size, count(), at(50), at(99), nanos);
    }

    /** p50 and p99 in µs, millions of requests per second, and MB/s (2^20) of requests (the replies carry as much back). */
    static String row(int size, long requests, long p50, long p99, long nanos) {
        double seconds = nanos / 1e9;
        double rate = seconds <= 0 ? 0 : requests / seconds;
        return String.format(Locale.ROOT, " %-7d    %-10d     %-9.2f      %-9.2f    %-9.6f            %-9.2f",
                size, requests, p50 / 1e3, p99 / 1e3, rate / 1e6, rate * size / 0x100000);
    }
}
