package org.rdmapanama.bench.perftest;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.SendRequest;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * perftest's latency loops: one operation in flight, its post time in a
 * pre-allocated array. write_lat and send_lat ping-pong (each side answers
 * the peer's last), read_lat and atomic_lat run on the client only. Each
 * returns perftest's result row. Nothing here allocates.
 */
final class PerftestLatency {
    private static final long STALL_NANOS = PerftestCompletions.STALL_NANOS;
    private static final VarHandle BYTE = JAVA_BYTE.varHandle();

    private final PerftestOptions o;
    private final PerftestCompletions done;
    private final DurationClock clock = new DurationClock();
    private final boolean server;
    private final int slot;
    private final ConfinedPoster qp; // the run thread's: no arena acquire per post
    private final MemoryRegion mr;
    private final MemorySegment mem;
    private final SendRequest data;
    /** Where the peer's [S, 2S) is: lane 0's QP address from the handshake. */
    private final long peerAddress;
    private final int peerRkey;
    private final long[] tposted;

    PerftestLatency(PerftestPath link, PerftestCompletions done, long[] tposted) {
        PerftestLane lane = link.lanes()[0];
        this.o = link.options();
        this.done = done;
        this.server = link.server();
        this.slot = link.slot();
        this.qp = lane.poster();
        this.mr = lane.mr();
        this.mem = link.mem();
        this.data = lane.data();
        this.peerAddress = lane.peerKeys().vaddr();
        this.peerRkey = lane.peerKeys().rkey();
        this.tposted = tposted;
    }

    String writeLat(int size) throws RdmaException {
        int n = o.iters;
        boolean duration = o.duration != null;
        long pollAt = slot + size - 1;
        long postAt = size - 1;
        data.inline(0, false).opcode(0, Opcode.RDMA_WRITE).signaled(0, true).sge(mr, 0, size)
                .remote(peerAddress, peerRkey).inline(0, size <= o.inline());
        if (duration) {
            clock.start(o.duration);
        }
        long scnt = 0, rcnt = 0;
        boolean first = server; // perftest: the server writes first in write_lat
        outer:
        while (duration || scnt < n || rcnt < n || done.dataDone() < n) {
            if ((duration || rcnt < n) && !first) {
                rcnt++;
                byte want = (byte) rcnt;
                long since = System.nanoTime();
                int spins = 0;
                while ((byte) BYTE.getAcquire(mem, pollAt) != want) {
                    if ((++spins & (PerftestCompletions.CLOCK_EVERY - 1)) != 0) {
                        continue; // the clock is slower to read than the byte (PerftestCompletions#awaitData)
                    }
                    long now = System.nanoTime();
                    done.peer().check(now);
                    if (duration ? clock.ended(now, done.dataDone()) : now - since > STALL_NANOS) {
                        if (duration) {
                            break outer;
                        }
                        throw PerftestCompletions.stalled("the peer's RDMA Write " + rcnt);
                    }
                }
            }
            first = false;
            if (duration || scnt < n) {
                long now = System.nanoTime();
                if (duration) {
                    if (clock.ended(now, done.dataDone())) {
                        break;
                    }
                } else {
                    tposted[(int) scnt] = now;
                }
                mem.set(JAVA_BYTE, postAt, (byte) ++scnt);
                data.wrId(0, scnt - 1);
                qp.postSend(data);
                done.awaitData(scnt);
            }
        }
        return row(size, n, duration, 2);
    }

    String sendLat(int size) throws RdmaException {
        int n = o.iters;
        boolean duration = o.duration != null;
        data.inline(0, false).opcode(0, Opcode.SEND).signaled(0, true).sge(mr, 0, size)
                .inline(0, size <= o.inline());
        if (duration) {
            clock.start(o.duration);
        }
        long base = done.runRecvBase();
        long scnt = 0, rcnt = 0;
        boolean first = !server; // perftest: the client sends first in send_lat
        outer:
        while (duration || scnt < n || rcnt < n) {
            if ((duration || rcnt < n) && !first) {
                long since = System.nanoTime();
                while (done.recvs() - base <= rcnt) {
                    if (done.poll() == 0 && done.ticked()) {
                        long now = done.clock();
                        if (duration ? clock.ended(now, done.dataDone()) : now - since > STALL_NANOS) {
                            if (duration) {
                                break outer;
                            }
                            throw PerftestCompletions.stalled("the peer's Send " + (rcnt + 1));
                        }
                    }
                }
                rcnt++;
                done.repostRecv();
            }
            first = false;
            if (duration || scnt < n) {
                if (!postAndAwait(scnt, duration)) {
                    break;
                }
                scnt++;
            }
        }
        return row(size, n, duration, 2);
    }

    /** The client's loop; the server's side is passive (perftest's read_lat and atomic_lat servers print no rows). */
    String readOrAtomicLat(int size) throws RdmaException {
        int n = o.iters;
        boolean duration = o.duration != null;
        if (o.test.verb == PerftestOptions.Verb.READ) {
            data.opcode(0, Opcode.RDMA_READ).signaled(0, true).sge(mr, 0, size).remote(peerAddress, peerRkey);
        } else {
            data.opcode(0, o.fetchAndAdd ? Opcode.ATOMIC_FETCH_AND_ADD : Opcode.ATOMIC_CMP_AND_SWP)
                    .signaled(0, true).sge(mr, 0, 8).atomic(0, peerAddress, peerRkey, o.fetchAndAdd ? 1 : 0, 1);
        }
        if (duration) {
            clock.start(o.duration);
        }
        for (long scnt = 0; duration || scnt < n; scnt++) {
            if (!postAndAwait(scnt, duration)) {
                break;
            }
        }
        return row(size, n, duration, 1);
    }

    /**
     * Posts send {@code scnt}, timestamped (or, under {@code -D}, checked
     * against the clock), and waits for its completion; false once the
     * {@code -D} clock has ended, with nothing posted.
     */
    private boolean postAndAwait(long scnt, boolean duration) throws RdmaException {
        long now = System.nanoTime();
        if (duration) {
            if (clock.ended(now, done.dataDone())) {
                return false;
            }
        } else {
            tposted[(int) scnt] = now;
        }
        data.wrId(0, scnt);
        qp.postSend(data);
        done.awaitData(scnt + 1);
        return true;
    }

    /**
     * Set during unreported warm-up rounds: their rows are thrown away, so they are not computed. The
     * sort and formatting would otherwise keep the JIT compiling round after round, and the warm-up waits
     * for the JIT to be idle; the reported run's row is computed after its timed loop either way.
     */
    private boolean warming;

    void warming(boolean w) {
        warming = w;
    }

    /** perftest's result row: {@code divisor} 2 reports half the round trip (write, send), 1 the whole (read, atomic). */
    private String row(int size, int n, boolean duration, int divisor) {
        if (warming) {
            return null;
        }
        return duration
                ? PerftestRows.row(PerftestStats.latencyDuration(size, clock.sampleCount, clock.sampleEnd - clock.sampleStart, divisor))
                : PerftestRows.row(PerftestStats.latency(size, tposted, n, divisor));
    }
}
