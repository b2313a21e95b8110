package org.rdmapanama.bench.perftest;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.SendRequest;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The 128-byte control area at {@code 2S} in each side's region, which the
 * peer writes with RDMA Writes: the receive credit (send_bw on iWARP, which
 * has no RNR retry), the barrier generation (one barrier before each size and
 * one at the end), the warm-up vote, and the client's bandwidth report, which
 * write_bw and read_bw servers print as perftest's do. The first half holds
 * what the peer wrote; the second half our copies to write from.
 */
final class PerftestControl {
    static final int SIZE = 128;
    static final int CTRL_CREDIT = 0, CTRL_BARRIER = 8, CTRL_REPORT = 16, CTRL_VOTE = 56; // written by the peer
    static final int OUT_CREDIT = 64, OUT_BARRIER = 72, OUT_REPORT = 80, OUT_VOTE = 120;   // our copies to write from
    private static final int REPORT_BYTES = 40;

    private static final long STALL_NANOS = PerftestCompletions.STALL_NANOS;
    private static final long BARRIER_SPIN_NANOS = Duration.ofMillis(1).toNanos();
    /*
     * A passive side's wait parks 1 ms, then twice as long each time up to this (-Drdma.bench.barrierParkMaxMillis):
     * its wake-ups take CPU from the peer's RDMA work under emulation, which shows in siw0's latency
     * (docs/results). A dead peer is still noticed within this.
     */
    private static final long BARRIER_PARK_NANOS = Duration.ofMillis(1).toNanos();
    private static final long BARRIER_PARK_MAX_NANOS =
            Duration.ofMillis(Math.max(1, Long.getLong("rdma.bench.barrierParkMaxMillis", 100))).toNanos();
    private static final VarHandle LONG = JAVA_LONG.varHandle();
    private static final VarHandle INT = JAVA_INT.varHandle();

    private final PerftestOptions o;
    private final PerftestCompletions done;
    private final ConfinedPoster qp; // the run thread's: no arena acquire per post
    private final MemoryRegion mr;
    private final MemorySegment mem;
    private final SendRequest ctrl;
    private final SendRequest credit;
    /** Where the peer's [S, 2S) is (lane 0's QP address from the handshake); its control area follows it. */
    private final long peerAddress;
    private final int peerRkey;
    private final long slot;
    /** Where the area starts in our region: 2S. */
    private final long base;
    private long barrierGen;
    /** perftest's 32-bit, per-size receive credits (PerftestLink#nativeCredits), not ours. */
    private final boolean nativeCredits;
    /** {@link #writeCredit}'s two formats as data: -1 (perftest's per-size count) or 0 (our running one). */
    private final long creditSizeMask;
    /** Where in the peer's region the credit goes: perftest's buffer start, or our control slot's word. */
    private final long creditRemoteOffset;

    PerftestControl(PerftestPath link, PerftestCompletions done) {
        this.o = link.options();
        this.done = done;
        PerftestLane first = link.lanes()[0];
        this.qp = first.poster();
        this.mr = link.mr();
        this.mem = link.mem();
        this.ctrl = link.ctrl();
        this.credit = link.credit();
        this.peerAddress = first.peerKeys().vaddr();
        this.peerRkey = first.peerKeys().rkey();
        this.slot = link.slot();
        this.base = 2L * slot;
        this.nativeCredits = link.nativeCredits();
        if (nativeCredits) {
            // writeCredit stores a long: perftest's 32-bit count is its low half, at +4 on a big-endian machine.
            long low = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? Integer.BYTES : 0;
            credit.sge(mr, base + OUT_CREDIT + low, Integer.BYTES);
        }
        this.creditSizeMask = nativeCredits ? -1L : 0L;
        this.creditRemoteOffset = nativeCredits ? 0 : slot + CTRL_CREDIT;
    }

    /** How long a side may wait at a barrier for its peer's run: generous, never forever. */
    long phaseTimeout(int size) {
        long perIter = 5_000_000L + size * 1_000L; // 5 ms + 1 MB/s under emulation
        long b = Duration.ofSeconds(60).toNanos();
        return o.duration != null ? b + Duration.ofSeconds(o.duration).toNanos() : b + (long) o.iters * o.numQps * perIter;
    }

    /** The peer advertised its [S, 2S) slot; its control area follows it. */
    private void writeCtrl(long localOffset, int length, long remoteOffset, long timeoutNanos) throws RdmaException {
        ctrl.sge(mr, localOffset, length).remote(0, peerAddress + slot + remoteOffset, peerRkey);
        done.expectCtrl();
        qp.postSend(ctrl);
        long since = System.nanoTime();
        while (!done.ctrlDone()) {
            if (done.poll() == 0 && System.nanoTime() - since > timeoutNanos) { // poll() watches the peer
                throw new RdmaException("a control RDMA Write to the peer did not complete within "
                        + timeoutNanos / 1_000_000_000 + " s");
            }
        }
    }

    /**
     * Both sides write their next barrier generation into the other's barrier word, then wait to see
     * the peer's. Both call barrier() the same number of times, so the generations match.
     */
    void barrier(long timeoutNanos) throws RdmaException {
        long gen = ++barrierGen;
        long out = base + OUT_BARRIER;
        mem.set(JAVA_LONG, out, gen);
        writeCtrl(out, 8, CTRL_BARRIER, STALL_NANOS);
        long at = base + CTRL_BARRIER;
        long since = System.nanoTime();
        long park = BARRIER_PARK_NANOS;
        while ((long) LONG.getAcquire(mem, at) < gen) {
            try {
                done.poll(); // keeps counting completions (e.g. credit writes) while waiting
            } catch (RdmaException e) {
                // A peer past the last barrier closes at once, and its close may flush our receives
                // between the look at the word above and this poll: the barrier was still reached.
                if ((long) LONG.getAcquire(mem, at) >= gen) {
                    return;
                }
                throw e;
            }
            long now = System.nanoTime();
            done.peer().check(now); // a peer that died ends the wait now, not at the timeout
            long waited = now - since;
            if (waited > BARRIER_SPIN_NANOS) {
                // The passive side of a bandwidth or read test waits here for the whole run. Spinning
                // would take the CPU that the peer and the kernel's RDMA work need; perftest's passive
                // side sleeps in a socket read. Nothing timed waits here.
                LockSupport.parkNanos(park);
                park = Math.min(2 * park, BARRIER_PARK_MAX_NANOS);
            }
            if (waited > timeoutNanos) {
                throw new RdmaException("the peer did not reach step " + gen + " within "
                        + timeoutNanos / 1_000_000_000 + " s: is it still running with the same flags?");
            }
        }
    }

    /**
     * A barrier at which each side also says whether its JIT is still busy and whether its cap is
     * reached: another round follows while either is busy and neither is capped, so the smaller cap
     * wins. The vote has its own word, which the peer writes again only at the next vote, after a
     * barrier this side takes part in; the barrier word may already hold the next generation.
     */
    boolean agree(boolean busy, boolean capped, long timeoutNanos) throws RdmaException {
        long gen = barrierGen + 1; // the generation of the barrier below
        long outVote = base + OUT_VOTE;
        mem.set(JAVA_LONG, outVote, gen << 2 | (capped ? 2 : 0) | (busy ? 1 : 0));
        writeCtrl(outVote, 8, CTRL_VOTE, STALL_NANOS);
        barrier(timeoutNanos);
        // iWARP does not promise that two Writes are placed in order: wait for the vote itself.
        long at = base + CTRL_VOTE;
        long since = System.nanoTime();
        long vote;
        while ((vote = (long) LONG.getAcquire(mem, at)) >>> 2 != gen) {
            long now = System.nanoTime();
            done.peer().check(now);
            if (now - since > STALL_NANOS) {
                throw new RdmaException("the peer's warm-up vote is for step " + (vote >>> 2) + ", expected "
                        + gen + ": is it running the same version of rdma-bench?");
            }
            Thread.onSpinWait();
        }
        boolean peerBusy = (vote & 1) != 0, peerCapped = (vote & 2) != 0;
        return (busy || peerBusy) && !(capped || peerCapped);
    }

    /** The client's figures, then the barrier the server takes after reading them (see PerftestBandwidth). */
    void sendReport(PerftestStats.Bandwidth bw) throws RdmaException {
        long r = base + OUT_REPORT;
        mem.set(JAVA_LONG, r, bw.size());
        mem.set(JAVA_LONG, r + 8, bw.iters());
        mem.set(JAVA_LONG, r + 16, Double.doubleToRawLongBits(bw.peak()));
        mem.set(JAVA_LONG, r + 24, Double.doubleToRawLongBits(bw.avg()));
        mem.set(JAVA_LONG, r + 32, Double.doubleToRawLongBits(bw.msgRate()));
        writeCtrl(r, REPORT_BYTES, CTRL_REPORT, STALL_NANOS);
        barrier(STALL_NANOS);
    }

    /** The report the client wrote; valid after the barrier that follows its write. */
    PerftestStats.Bandwidth receivedReport() {
        long r = base + CTRL_REPORT;
        return new PerftestStats.Bandwidth(mem.get(JAVA_LONG, r), mem.get(JAVA_LONG, r + 8),
                Double.longBitsToDouble(mem.get(JAVA_LONG, r + 16)), Double.longBitsToDouble(mem.get(JAVA_LONG, r + 24)),
                Double.longBitsToDouble(mem.get(JAVA_LONG, r + 32)));
    }

    /*
     * The credit's format is chosen here alone. Between two Java ends: a 64-bit count of all Sends received,
     * written into the sender's control slot. Against native perftest (nativeCredits): its own 32-bit count
     * of this size's Sends, written to the word the sender advertised, which the sender zeroes per size.
     */

    /** A sender's start of a size: a native receiver counts this size's Sends from 0 again. */
    void startSending() {
        if (nativeCredits) {
            INT.setRelease(mem, base + CTRL_CREDIT, 0);
        }
    }

    /** Whether one more Send keeps the peer's unused receives above zero: sent in this size, and in all. */
    boolean creditAllows(long sentInSize, long sentInAll, int rxDepth) {
        long sent = nativeCredits ? sentInSize : sentInAll;
        long received = nativeCredits ? Integer.toUnsignedLong((int) INT.getAcquire(mem, base + CTRL_CREDIT))
                : (long) LONG.getAcquire(mem, base + CTRL_CREDIT);
        return sent - received < rxDepth;
    }

    /**
     * Tells the peer how many of its Sends we have received: {@code received} in all, {@code receivedBefore}
     * of them before this size began. One credit write in flight at a time.
     */
    void writeCredit(long received, long receivedBefore) throws RdmaException {
        // One path for both formats: a Java server's warm-up writes ours and its run against a native client
        // perftest's, so a branch on the format was compiled for ours alone and trapped at the run's first
        // credit (-Xlog:deoptimization). perftest's 32-bit count is the long's low half, the 4 bytes its SGE sends.
        mem.set(JAVA_LONG, base + OUT_CREDIT, received - (receivedBefore & creditSizeMask));
        credit.remote(0, peerAddress + creditRemoteOffset, peerRkey);
        done.creditPosted();
        qp.postSend(credit);
    }
}
