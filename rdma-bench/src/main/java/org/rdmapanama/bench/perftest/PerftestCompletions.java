package org.rdmapanama.bench.perftest;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.ConfinedPoller;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.ReceiveRequest;

import java.time.Duration;

/**
 * The completion accounting of a run, from its CQ (with {@code -R -q N}, its N
 * CQs): receives, data WRs (their wr_id is their QP and their index on it, and
 * a QP completes in order, so the last completion tells how many of that QP's
 * are done), control and credit writes, and the receive ring kept posted for
 * Send tests. The loops read the counters directly; only {@link #poll} moves them.
 */
final class PerftestCompletions {
    /** A data loop that sees no progress this long gives up: the peer is gone. */
    static final long STALL_NANOS = Duration.ofSeconds(30).toNanos();

    /** The run's CQs, the run thread's as are the posters (no arena acquire per call): one, or one a connection with -R -q N. */
    private final PerftestPath.Cq[] cqs;
    private final PerftestLane[] lanes;
    /** Lane 0's poster, where the receives go. */
    private final ConfinedPoster qp;
    private final ReceiveRequest recv;
    /** When each data WR completed, while {@link #recordCompletions}. */
    private final long[] tcompleted;

    private long recvs;
    /** recvs when this size's run began: taken before its barrier, as the peer may send while we wait in it. */
    private long runRecvBase;
    /** When the run's first receive was polled, which may be inside the barrier. */
    private long firstRecvAt;
    /** Data WRs done, over all QPs (each lane counts its own). Reset with {@link #startData}. */
    private long dataDone;
    private boolean ctrlDone;
    private boolean creditInFlight;
    private boolean recordCompletions;
    private long postedRecvs;
    private final long totalRecvs;
    private long totalSent;
    /** Looked at on every 64th empty poll: every wait for the peer polls, and none waits forever. */
    private final PerftestPeerWatch peer;
    private int idlePolls;
    /**
     * Whether the last poll was an empty one that read the clock (every {@link #CLOCK_EVERY}th), and what it
     * read: the waits check their deadlines then, on that reading, instead of reading the clock again.
     */
    private boolean ticked;
    private long clock;

    PerftestCompletions(PerftestPath link, int records) {
        this.cqs = link.cqs();
        this.lanes = link.lanes();
        this.qp = lanes[0].poster();
        this.recv = link.recv();
        this.postedRecvs = link.postedRecvs();
        this.totalRecvs = link.totalRecvs();
        this.tcompleted = new long[records];
        this.peer = link.peerWatch();
    }

    /** Receives polled in all, and when this size's count began. */
    long recvs() {
        return recvs;
    }

    long runRecvBase() {
        return runRecvBase;
    }

    long firstRecvAt() {
        return firstRecvAt;
    }

    long dataDone() {
        return dataDone;
    }

    /** When each data WR completed, while {@link #recordCompletions} is on. */
    long[] completionTimes() {
        return tcompleted;
    }

    void recordCompletions(boolean on) {
        recordCompletions = on;
    }

    /** Sends posted in all (a sender's credit window); {@link #countSent} adds one. */
    long totalSent() {
        return totalSent;
    }

    void countSent() {
        totalSent++;
    }

    /** A control write is posted: {@link #ctrlDone} until its completion is polled. */
    void expectCtrl() {
        ctrlDone = false;
    }

    boolean ctrlDone() {
        return ctrlDone;
    }

    /** A credit write is posted: {@link #creditInFlight} until its completion is polled. */
    void creditPosted() {
        creditInFlight = true;
    }

    boolean creditInFlight() {
        return creditInFlight;
    }

    PerftestPeerWatch peer() {
        return peer;
    }

    /** Whether the last poll was empty and read the clock, and what it read. */
    boolean ticked() {
        return ticked;
    }

    long clock() {
        return clock;
    }

    /** A data WR's wr_id: its QP (-q) and its index among that QP's WRs of the run. */
    static long dataId(int qp, long index) {
        return (long) qp << QP_SHIFT | index;
    }

    private static final int QP_SHIFT = 40; // below the tags (bit 60 up); 2^40 WRs a QP
    private static final long INDEX_MASK = (1L << QP_SHIFT) - 1;

    /** Before a size, ahead of its barrier or handshake: the receives it counts start here. */
    void beginSize() {
        runRecvBase = recvs;
    }

    /** Before a size's run: no data WR posted or done yet on any QP. */
    void startData() {
        dataDone = 0;
        for (PerftestLane l : lanes) {
            l.reset();
        }
    }

    /**
     * One {@code ibv_poll_cq} (one per CQ with {@code -R -q N}): counts receives, data completions (by wr_id)
     * and control writes.
     */
    int poll() throws RdmaException {
        int n = 0;
        for (PerftestPath.Cq c : cqs) {
            n += take(c.poller(), c.batch());
        }
        if (n == 0) {
            ticked = (++idlePolls & (CLOCK_EVERY - 1)) == 0;
            if (ticked) {
                clock = System.nanoTime();
                peer.check(clock);
            }
            return 0;
        }
        ticked = false;
        return n;
    }

    private int take(ConfinedPoller cq, CompletionBatch batch) throws RdmaException {
        int n = cq.poll(batch);
        if (n == 0) {
            return 0;
        }
        long now = System.nanoTime();
        for (int i = 0; i < n; i++) {
            if (!batch.isSuccess(i)) {
                try {
                    batch.requireSuccess(i);
                } catch (RdmaException e) {
                    throw peer.completionFailed(e);
                }
            }
            long id = batch.wrId(i);
            if (id == PerftestLink.RECV_ID) {
                if (recvs++ == runRecvBase) {
                    firstRecvAt = now;
                }
            } else if (id == PerftestLink.CTRL_ID) {
                ctrlDone = true;
            } else if (id == PerftestLink.CREDIT_ID) {
                creditInFlight = false;
            } else {
                // perftest's accounting: a QP's signaled completion covers its unsignaled WRs before it.
                long before = dataDone;
                dataDone += lanes[(int) (id >>> QP_SHIFT)].completeUpTo((id & INDEX_MASK) + 1);
                if (recordCompletions) {
                    // Every count it passes: with several QPs a QP's short last batch moves it off the
                    // multiples of cqMod the peak search reads (perftest steps by cqMod and clamps instead).
                    for (long k = before; k < dataDone && k < tcompleted.length; k++) {
                        tcompleted[(int) k] = now;
                    }
                }
            }
        }
        return n;
    }

    /**
     * Spins on the CQ until data completion {@code count} is in. The clock is read on every
     * {@link #CLOCK_EVERY}th empty poll only ({@link #ticked}): under emulation {@code System.nanoTime()} costs more
     * than the poll, and reading it on each spin made Java poll siw's CQ ten times less often than
     * perftest does (README, the siw0 read_lat profile).
     */
    void awaitData(long count) throws RdmaException {
        long since = System.nanoTime();
        while (dataDone < count) {
            if (poll() == 0 && ticked && clock - since > STALL_NANOS) {
                throw stalled("the completion of operation " + count);
            }
        }
    }

    /** Spin loops read the clock (stall, -D end, peer watch) once per this many empty spins; a power of 2. */
    static final int CLOCK_EVERY = 64;

    /** Posts one receive for the one just used, while the run needs more. */
    void repostRecv() throws RdmaException {
        postUpTo(Math.min(totalRecvs, postedRecvs + 1));
    }

    /** Tops the posted receives up to {@code depth} outstanding, within the run's total. */
    void refillRecvs(int depth) throws RdmaException {
        postUpTo(Math.min(totalRecvs, recvs + depth));
    }

    /**
     * The run's total is one bound with the others, not a test of its own: the warm-up's total is unbounded, so
     * such a test would never fail there, and C2 compiled the receiving loop with a trap where the run posts its
     * last receive (seen with -Xlog:deoptimization on a Java send_bw server), leaving the last receive depth's
     * worth of the run interpreted.
     */
    private void postUpTo(long limit) throws RdmaException {
        while (postedRecvs < limit) {
            qp.postRecv(recv);
            postedRecvs++;
        }
    }

    static RdmaException stalled(String what) {
        return new RdmaException("no progress for " + STALL_NANOS / 1_000_000_000 + " s waiting for " + what
                + ": is the peer still running with the same flags?");
    }
}
