package org.rdmapanama.bench.perftest;

import java.io.IOException;
import java.io.PrintStream;

/**
 * One round over a run's sizes, the one loop of the reported run, of its warm-up rounds with an
 * rdma-bench peer and of the local warm-up against native perftest ({@link PerftestLoopback}), so that
 * the JIT compiles in the warm-up the code the run then times. For each size: what the round's
 * {@link Pace} does first (a barrier, perftest's handshake, or the loopback's own preparation), then the
 * {@link PerftestLatency} or {@link PerftestBandwidth} loop, whose row it prints.
 */
final class PerftestRound {
    /** What a round does around each size besides its loop. */
    interface Pace {
        void beforeSize(int size) throws IOException;

        default void afterSize(int size) throws IOException {}
    }

    private final PerftestPath link;
    private final PerftestOptions o;
    private final PerftestCompletions done;
    private final PerftestControl control;
    private final PerftestLatency latency;
    private final PerftestBandwidth bandwidth;

    /** {@code records}: the timestamps a size takes (one per WR of every QP), allocated here once. */
    PerftestRound(PerftestPath link, int records) {
        this.link = link;
        this.o = link.options();
        long[] tposted = new long[records];
        this.done = new PerftestCompletions(link, records);
        this.control = new PerftestControl(link, done);
        this.latency = new PerftestLatency(link, done, tposted);
        this.bandwidth = new PerftestBandwidth(link, done, control, tposted);
    }

    void run(int[] sizes, Pace pace, PrintStream out) throws IOException {
        for (int size : sizes) {
            done.beginSize();
            pace.beforeSize(size);
            done.startData();
            String row = switch (o.test) {
                case WRITE_LAT -> latency.writeLat(size);
                case SEND_LAT -> latency.sendLat(size);
                case READ_LAT, ATOMIC_LAT -> link.server() ? null : latency.readOrAtomicLat(size);
                case WRITE_BW, READ_BW, SEND_BW -> bandwidth.run(size);
            };
            if (row != null) {
                out.println(row);
            }
            pace.afterSize(size);
        }
    }

    /** Unreported rounds: their rows are not computed (see PerftestLatency#warming). */
    void warming(boolean w) {
        latency.warming(w);
        bandwidth.warming(w);
    }

    PerftestCompletions completions() {
        return done;
    }

    PerftestControl control() {
        return control;
    }

    PerftestBandwidth bandwidth() {
        return bandwidth;
    }
}
