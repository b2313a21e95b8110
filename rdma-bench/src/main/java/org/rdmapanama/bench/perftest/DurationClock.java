package org.rdmapanama.bench.perftest;

import java.time.Duration;

/**
 * perftest's {@code -D} clock: its SIGALRM states, driven by the loops' own
 * {@link System#nanoTime} reads instead of a signal. The first and last 2 s
 * are not measured; the sample is what finished between them.
 */
final class DurationClock {
    private static final long MARGIN_NANOS = Duration.ofSeconds(2).toNanos();

    /** perftest's START_STATE, SAMPLE_STATE and STOP_SAMPLE_STATE; the run ends at the deadline. */
    enum Phase { WARM_UP, SAMPLING, COOL_DOWN }

    private long tSample, tStop, tEnd;
    private Phase phase = Phase.WARM_UP;
    /** When the sample began and ended, and the operations finished in it. */
    long sampleStart, sampleEnd, sampleCount;
    private long sampleBase;

    void start(int seconds) {
        long now = System.nanoTime();
        long d = Duration.ofSeconds(seconds).toNanos();
        tSample = now + MARGIN_NANOS;
        tStop = now + d - MARGIN_NANOS;
        tEnd = now + d;
        phase = Phase.WARM_UP;
    }

    /** Moves to the next phase when its time has come; {@code count} is the running total of finished operations. */
    boolean ended(long now, long count) {
        if (phase == Phase.WARM_UP && now - tSample >= 0) {
            phase = Phase.SAMPLING;
            sampleStart = now;
            sampleBase = count;
        }
        if (phase == Phase.SAMPLING && now - tStop >= 0) {
            phase = Phase.COOL_DOWN;
            sampleEnd = now;
            sampleCount = count - sampleBase;
        }
        return now - tEnd >= 0;
    }
}
