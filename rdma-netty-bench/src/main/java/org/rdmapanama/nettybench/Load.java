package org.rdmapanama.nettybench;

import org.HdrHistogram.Histogram;

import java.util.concurrent.CompletableFuture;

/**
 * One timed run of requests over a case's connections, W outstanding on each: every connection issues W
 * requests, and each reply records its latency (issue to reply; replies come in request order, so the issue
 * times are a ring per connection) and issues the next one until the run's time is up; the run ends when
 * every connection's last reply came back. One thread (the client's one event loop) calls everything
 * between {@link #begin} and the future's completion; nothing is allocated per request.
 */
final class Load {
    /** One connection's requests. */
    static final class Lane {
        private final long[] issued;
        long sent;
        long received;

        Lane(int maxOutstanding) {
            issued = new long[maxOutstanding];
        }

        boolean drained() {
            return received == sent;
        }
    }

    static final long HIGHEST = 60_000_000_000L;
    /** The largest window a lane keeps issue times for. */
    static final int MAX_OUTSTANDING = 1024;

    private final Histogram latencies = new Histogram(1, HIGHEST, 3);
    private boolean record;
    private long deadline;
    private int busy;
    private long replies;
    private long start;
    private long last;
    private CompletableFuture<Load> done;

    /** Starts a run of {@code nanos} over {@code lanes} connections (on the loop thread, before the first issue). */
    CompletableFuture<Load> begin(boolean recorded, long nanos, int lanes) {
        done = new CompletableFuture<>();
        latencies.reset();
        record = recorded;
        replies = 0;
        busy = lanes;
        start = System.nanoTime();
        last = start;
        deadline = start + nanos;
        return done;
    }

    /** Resets a lane for this run. */
    void enter(Lane lane) {
        lane.sent = 0;
        lane.received = 0;
    }

    void issued(Lane lane, long now) {
        lane.issued[(int) (lane.sent++ % lane.issued.length)] = now;
    }

    /**
     * A reply on {@code lane} at {@code now}: true when the lane should issue the next request; false when the
     * run's time is up (the run completes once every lane has its replies).
     */
    boolean reply(Lane lane, long now) {
        if (done == null || done.isDone()) {
            return false; // a failed run's stragglers
        }
        if (lane.received >= lane.sent) {
            fail(new IllegalStateException("a reply to no request"));
            return false;
        }
        long t = now - lane.issued[(int) (lane.received++ % lane.issued.length)];
        replies++;
        last = now;
        if (record) {
            latencies.recordValue(Math.clamp(t, 1, HIGHEST));
        }
        if (now - deadline < 0) {
            return true;
        }
        if (lane.drained() && --busy == 0) {
            done.complete(this);
        }
        return false;
    }

    void fail(Throwable cause) {
        if (done != null) {
            done.completeExceptionally(cause);
        }
    }

    boolean running() {
        return done != null && !done.isDone();
    }

    long replies() {
        return replies;
    }

    /** First issue to last reply. */
    long nanos() {
        return last - start;
    }

    long percentile(double p) {
        return latencies.getValueAtPercentile(p);
    }
}
