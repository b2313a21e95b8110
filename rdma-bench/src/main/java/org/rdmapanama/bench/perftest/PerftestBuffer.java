package org.rdmapanama.bench.perftest;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import static org.rdmapanama.bench.perftest.PerftestLink.closeQuietly;

/**
 * A run's region ({@code [0,S)} source, {@code [S,2S)} the peer's target, then the {@link PerftestControl}
 * area) and the requests that lane 0's QP carries besides its data: the control and credit writes and,
 * for Send tests, the receive, of which the first {@code rxDepth} are posted here. The region belongs to
 * its PD; {@link #close} closes the requests.
 */
final class PerftestBuffer implements AutoCloseable {
    private final MemoryRegion mr;
    private final SendRequest ctrl;
    private final SendRequest credit;
    private final ReceiveRequest recv;
    private final long postedRecvs;
    private final long totalRecvs;

    /**
     * @param receives   whether the test receives Sends
     * @param totalRecvs the receives the whole run takes ({@link Long#MAX_VALUE}: open-ended)
     */
    PerftestBuffer(ProtectionDomain pd, QueuePair qp, int slot, Access[] access, boolean receives, long totalRecvs,
                   int rxDepth) throws RdmaException {
        mr = pd.allocate(2L * slot + PerftestControl.SIZE, access);
        SendRequest c = null, k = null;
        ReceiveRequest r = null;
        long posted = 0;
        boolean ok = false;
        try {
            c = qp.newSendRequest(1, 1);
            k = qp.newSendRequest(1, 1);
            c.opcode(0, Opcode.RDMA_WRITE).wrId(PerftestLink.CTRL_ID).signaled(0, true);
            k.opcode(0, Opcode.RDMA_WRITE).wrId(PerftestLink.CREDIT_ID).signaled(0, true)
                    .sge(mr, 2L * slot + PerftestControl.OUT_CREDIT, 8);
            if (receives) {
                r = qp.newReceiveRequest(1, 1);
                r.wrId(PerftestLink.RECV_ID).sge(mr, slot, slot);
                long first = Math.min(rxDepth, totalRecvs);
                for (; posted < first; posted++) {
                    qp.postRecv(r);
                }
            }
            ok = true;
        } finally {
            if (!ok) {
                closeQuietly(r);
                closeQuietly(k);
                closeQuietly(c);
            }
        }
        ctrl = c;
        credit = k;
        recv = r;
        postedRecvs = posted;
        this.totalRecvs = receives ? totalRecvs : 0;
    }

    MemoryRegion mr() {
        return mr;
    }

    SendRequest ctrl() {
        return ctrl;
    }

    SendRequest credit() {
        return credit;
    }

    /** The receive (Send tests), or null. */
    ReceiveRequest recv() {
        return recv;
    }

    long postedRecvs() {
        return postedRecvs;
    }

    long totalRecvs() {
        return totalRecvs;
    }

    @Override
    public void close() {
        closeQuietly(ctrl);
        closeQuietly(credit);
        closeQuietly(recv);
    }
}
