package org.rdmapanama.bench.perftest;

import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Selection;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.ConfinedPoller;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.lang.foreign.MemorySegment;

/**
 * What a connected {@link PerftestLink} gives its run's loops, fixed once the set-up is done: the
 * options and roles, the region ({@code [0,S)} source, {@code [S,2S)} the peer's target, then the
 * {@link PerftestControl} area), lane 0's control, credit and receive requests, the QP lanes, the CQs,
 * and what the header reports. The link owns all of it and closes it.
 *
 * @param nativePeer    the peer is native perftest: no control area, no warm-up vote, perftest's handshakes
 * @param nativeCredits perftest's per-size receive credits ({@link PerftestLink#nativeCredits})
 * @param warmup        unreported rounds with an rdma-bench peer come first ({@link PerftestLink#warmup})
 * @param slot          S: at least the largest message, and (no -R) the agreed cycle buffer
 * @param postedRecvs   receives posted during set-up
 * @param totalRecvs    the receives the whole run takes (open-ended with -D or a warm-up)
 * @param watched       the connection whose rdma_cm events tell that the peer left (-R), or null
 */
record PerftestPath(PerftestOptions options, boolean server, boolean nativePeer, boolean nativeCredits,
                    boolean warmup, int slot, MemoryRegion mr, SendRequest ctrl, SendRequest credit,
                    ReceiveRequest recv, PerftestLane[] lanes, Cq[] cqs, long postedRecvs, long totalRecvs,
                    PerftestExchange exchange, RdmaConnection watched, DeviceContext context, Selection selection, int mtuBytes,
                    int outReads, int gidIndex) {

    /** One CQ of the run and its batch (the CQ's own memory: nothing to close): one, or one a connection with -R. */
    record Cq(ConfinedPoller poller, CompletionBatch batch) {}

    MemorySegment mem() {
        return mr.segment();
    }

    /** Watches for the peer going away during the run. */
    PerftestPeerWatch peerWatch() {
        return new PerftestPeerWatch(exchange, watched, lanes[0].qp());
    }
}
