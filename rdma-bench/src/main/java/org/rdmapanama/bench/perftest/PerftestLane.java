package org.rdmapanama.bench.perftest;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.QpAddress;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.SendRequest;

/**
 * One QP of a run (perftest's {@code -q}): the QP, the region as its PD knows it (with {@code -R} every
 * connection has its own PD, where the region is registered again), its data request, the poster bound
 * to the run's thread, the QP addresses both ends gave for it in the handshakes, and its counts in the
 * current size. The bandwidth loop posts to each lane in turn, as perftest's does. Lane 0 also carries
 * the control area's writes, the receives and the latency tests.
 */
final class PerftestLane implements AutoCloseable {
    private final QueuePair qp;
    private final MemoryRegion mr;
    private final SendRequest data;
    private ConfinedPoster poster;
    /** Whether {@link #poster} is this lane's own (loopback lanes share their one QP's). */
    private boolean ownsPoster;
    private PerftestKeys keys;
    private PerftestKeys peerKeys;
    /** WRs posted on this QP in this size's run (perftest's scnt[]), and how many of them completed (ccnt[]). */
    private long posted;
    private long completed;

    PerftestLane(QueuePair qp, MemoryRegion mr, SendRequest data) {
        this.qp = qp;
        this.mr = mr;
        this.data = data;
    }

    QueuePair qp() {
        return qp;
    }

    MemoryRegion mr() {
        return mr;
    }

    SendRequest data() {
        return data;
    }

    /** The run thread's poster: no arena acquire per post. */
    ConfinedPoster poster() {
        return poster;
    }

    /** Binds the data path to the calling thread; {@code shared} is lane 0's poster when this lane has the same QP. */
    void bind(ConfinedPoster shared) {
        ownsPoster = shared == null;
        poster = ownsPoster ? qp.confinedPoster() : shared;
    }

    /** Without -R: our QP to RTR and RTS, connected to the peer's from the handshake. */
    void connect(int ibPort, int gidIndex, int mtuBytes) throws RdmaException {
        byte[] gid = peerKeys.gid() != null ? peerKeys.gid() : new byte[16];
        QpAddress remote = new QpAddress(peerKeys.lid(), peerKeys.qpn(), peerKeys.psn(), gid);
        qp.toRtr(remote, ibPort, remote.hasGid() ? gidIndex : -1, mtuBytes);
        qp.toRts(keys.psn());
    }

    /** Our QP address for this QP, as the handshakes carry it. */
    PerftestKeys keys() {
        return keys;
    }

    void keys(PerftestKeys k) {
        keys = k;
    }

    /** The peer's QP address for this QP: where it writes or reads. */
    PerftestKeys peerKeys() {
        return peerKeys;
    }

    void peerKeys(PerftestKeys k) {
        peerKeys = k;
    }

    long posted() {
        return posted;
    }

    void posted(long count) {
        posted = count;
    }

    long completed() {
        return completed;
    }

    /**
     * This QP's WRs are done up to {@code count} (a QP completes in order, and a signaled completion covers
     * its unsignaled WRs before it); returns how many that adds.
     */
    long completeUpTo(long count) {
        long added = count - completed;
        completed = count;
        return added;
    }

    /** Before a size's run: nothing posted or done yet. */
    void reset() {
        posted = 0;
        completed = 0;
    }

    /** Closes what the lane owns: its poster (unless shared), then its data request. */
    @Override
    public void close() {
        PerftestLink.closeQuietly(ownsPoster ? poster : null);
        PerftestLink.closeQuietly(data);
    }
}
