package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.perftest.PerftestOptions.Verb;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.SendRequest;

/**
 * perftest's bandwidth loops: the client keeps up to {@code -t} WRs in flight
 * on each of its {@code -q} QPs, posting to each in turn, with every
 * {@code cqMod}-th of a QP's signaled; a send_bw server counts receives and
 * keeps them posted (and, on iWARP, which has no RNR retry, writes credits
 * back). write_bw and read_bw servers are passive and print the row the
 * client reports through the control area. Nothing here allocates.
 */
final class PerftestBandwidth {
    private static final long STALL_NANOS = PerftestCompletions.STALL_NANOS;

    private final PerftestOptions o;
    private final PerftestCompletions done;
    private final PerftestControl control;
    private final DurationClock clock = new DurationClock();
    private final boolean server;
    private final boolean needsCredits; // no RNR retry: a Send must never find its peer without a receive
    /** The QPs, each with its poster (the run thread's: no arena acquire per post), data request and peer's address. */
    private final PerftestLane[] lanes;
    private final long[] tposted;
    private final boolean nativePeer;
    /** A client's figures for its last size, for a native server (write_bw, read_bw). */
    private PerftestStats.Bandwidth lastReport;
    /** Set during unreported warm-up rounds: their rows are not formatted (see PerftestLatency#warming). */
    private boolean warming;
    /** The receive count of the last credit written: a send_bw server's, kept across sizes and rounds. */
    private long lastCredit;

    PerftestBandwidth(PerftestPath link, PerftestCompletions done, PerftestControl control, long[] tposted) {
        this.o = link.options();
        this.done = done;
        this.control = control;
        this.server = link.server();
        this.nativePeer = link.nativePeer();
        this.needsCredits = !link.context().transport().retriesReceiverNotReady();
        this.lanes = link.lanes();
        this.tposted = tposted;
    }

    PerftestStats.Bandwidth lastReport() {
        return lastReport;
    }

    void warming(boolean w) {
        warming = w;
    }

    /** One size: this side's part and the row it prints. */
    String run(int size) throws RdmaException {
        if (!server) {
            PerftestStats.Bandwidth bw = client(size);
            if (o.test.verb != Verb.SEND) {
                if (nativePeer) {
                    lastReport = bw; // handed over at the end, as perftest's client does (PerftestNativeEnd)
                } else {
                    control.sendReport(bw);
                }
            }
            return warming ? null : PerftestRows.row(bw);
        } else if (o.test.verb == Verb.SEND) {
            PerftestStats.Bandwidth bw = sendServer(size);
            return warming ? null : PerftestRows.row(bw);
        } else if (nativePeer) {
            return null; // perftest's client reports once, at the end: PerftestNativeEnd prints it
        }
        // The client's figures come before the next barrier (RDMA Writes on one QP arrive in order).
        control.barrier(control.phaseTimeout(size));
        return warming ? null : PerftestRows.row(control.receivedReport());
    }

    private PerftestStats.Bandwidth client(int size) throws RdmaException {
        int n = o.iters; // per QP, as perftest's -n
        int qn = lanes.length;
        long total = (long) n * qn;
        boolean duration = o.duration != null;
        int tx = o.txDepth;
        int cqMod = o.cqMod();
        boolean credits = o.test.verb == Verb.SEND && needsCredits;
        int rxDepth = o.rxDepth();
        long[] tcompleted = done.completionTimes();
        Opcode op = switch (o.test.verb) {
            case SEND -> Opcode.SEND;
            case READ -> Opcode.RDMA_READ;
            default -> Opcode.RDMA_WRITE;
        };
        for (PerftestLane lane : lanes) {
            SendRequest data = lane.data();
            data.inline(0, false).opcode(0, op).signaled(0, true).sge(lane.mr(), 0, size);
            if (op != Opcode.SEND) {
                data.remote(0, lane.peerKeys().vaddr(), lane.peerKeys().rkey());
            }
            data.inline(0, op != Opcode.RDMA_READ && size <= o.inline());
        }
        done.recordCompletions(!duration);
        if (duration) {
            clock.start(o.duration);
        }
        long totscnt = 0; // each lane's counts start at 0 (PerftestCompletions#startData)
        if (credits) {
            control.startSending();
        }
        long lastProgress = System.nanoTime();
        long lastDone = 0;
        while (duration || done.dataDone() < total) {
            // perftest's: each QP in turn gets as many WRs as its window takes, then one poll for all.
            for (int q = 0; q < qn; q++) {
                PerftestLane lane = lanes[q];
                SendRequest data = lane.data();
                ConfinedPoster qp = lane.poster();
                long s = lane.posted();
                while ((duration || s < n) && s - lane.completed() < tx
                        && (!credits || control.creditAllows(s, done.totalSent(), rxDepth))) {
                    // perftest's moderation: every cqMod-th WR of a QP and its last one ask for a completion.
                    data.signaled(0, s % cqMod == cqMod - 1 || (!duration && s == n - 1));
                    data.wrId(0, PerftestCompletions.dataId(q, s));
                    long now = System.nanoTime();
                    if (!duration) {
                        tposted[(int) totscnt] = now;
                    } else if (clock.ended(now, done.dataDone())) {
                        break;
                    }
                    qp.postSend(data);
                    s++;
                    totscnt++;
                    done.countSent();
                }
                lane.posted(s);
            }
            long now = System.nanoTime();
            if (duration && clock.ended(now, done.dataDone())) {
                break;
            }
            done.poll();
            if (done.dataDone() != lastDone) {
                lastDone = done.dataDone();
                lastProgress = now;
            } else if (now - lastProgress > STALL_NANOS) {
                throw PerftestCompletions.stalled("completion of WR " + done.dataDone());
            }
        }
        done.recordCompletions(false);
        if (duration) {
            // One size only: the WRs still in flight finish before the barrier's ordered control write.
            return PerftestStats.bandwidth(size, clock.sampleCount, null, null, cqMod, clock.sampleStart, clock.sampleEnd,
                    o.reportGbits);
        }
        // perftest's row counts the WRs of all QPs, and so do its bandwidth and message rate.
        // No peak for a warm-up round's row, which nobody reads: its search grows with the square of n x q.
        return PerftestStats.bandwidth(size, total, o.noPeak() || warming ? null : tposted, tcompleted, cqMod, tposted[0],
                tcompleted[(int) total - 1], o.reportGbits);
    }

    private PerftestStats.Bandwidth sendServer(int size) throws RdmaException {
        int n = o.iters;
        boolean duration = o.duration != null;
        int creditEvery = Math.max(1, o.rxDepth() / 4);
        long base = done.runRecvBase();
        long start = 0, end = 0;
        long since = System.nanoTime();
        boolean started = false;
        while (duration || done.recvs() - base < n) {
            int got = done.poll();
            long now = System.nanoTime();
            if (!started && done.recvs() > base) {
                started = true;
                start = done.firstRecvAt();
                if (duration) {
                    clock.start(o.duration);
                }
            }
            if (duration && started && clock.ended(now, done.recvs() - base)) {
                break;
            }
            done.refillRecvs(o.rxDepth());
            if (needsCredits && !done.creditInFlight()
                    && (done.recvs() - lastCredit >= creditEvery || (got == 0 && done.recvs() > lastCredit))) {
                lastCredit = done.recvs();
                control.writeCredit(done.recvs(), base);
            }
            if (got > 0) {
                since = now;
            } else if (!duration && now - since > STALL_NANOS) {
                throw PerftestCompletions.stalled("Send " + (done.recvs() - base + 1) + " of " + n);
            } else if (duration && !started && now - since > control.phaseTimeout(size)) {
                throw PerftestCompletions.stalled("the first Send");
            }
        }
        end = System.nanoTime();
        if (!started) {
            start = done.firstRecvAt(); // every Send of the run arrived while we were still in the barrier
        }
        if (duration) {
            return PerftestStats.bandwidth(size, clock.sampleCount, null, null, 1, clock.sampleStart, clock.sampleEnd,
                    o.reportGbits);
        }
        return PerftestStats.bandwidth(size, n, null, null, 1, start, end, o.reportGbits);
    }
}
