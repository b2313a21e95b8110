package org.rdmapanama.verbs;

import org.rdmapanama.error.CompletionQueueOverrunException;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.ffi.ibv_qp_cap;
import org.rdmapanama.ffi.ibv_qp_init_attr;

import org.rdmapanama.device.DeviceCapabilities;

import java.lang.foreign.MemorySegment;

/**
 * {@code struct ibv_qp_init_attr} from a {@link QueuePairConfig}, checked
 * against the device's limits and the CQs' sizes before anything is created.
 */
final class QueuePairInit {
    private QueuePairInit() {}

    static void fill(MemorySegment attr, ProtectionDomain pd, QueuePairConfig c) {
        DeviceContext ctx = pd.context();
        DeviceCapabilities caps = ctx.capabilities();
        String dev = ctx.device().name();
        if (c.type() == QueuePairType.UD && !ctx.transport().supportsUd()) {
            throw new TransportCapabilityException("UD queue pairs are not available on iWARP (" + dev
                    + "): iWARP runs over TCP and is RC only");
        }
        for (CompletionQueue cq : new CompletionQueue[] {c.sendCq(), c.recvCq()}) {
            if (cq.context() != ctx) {
                throw new IllegalArgumentException(cq + " belongs to another device than " + pd);
            }
        }
        if (c.srq() != null && c.srq().protectionDomain() != pd) {
            throw new IllegalArgumentException(c.srq() + " belongs to another protection domain than " + pd);
        }
        limit("max_send_wr", c.maxSendWr(), caps.maxQpWr(), dev, "max_qp_wr");
        limit("max_send_sge", c.maxSendSge(), caps.maxSge(), dev, "max_sge");
        if (c.srq() == null) {
            limit("max_recv_wr", c.maxRecvWr(), caps.maxQpWr(), dev, "max_qp_wr");
            limit("max_recv_sge", c.maxRecvSge(), caps.maxSge(), dev, "max_sge");
        }
        int recvWr = c.srq() == null ? c.maxRecvWr() : 0; // an SRQ's receives are bounded by the SRQ
        if (c.sendCq() == c.recvCq()) {
            fits(c.sendCq(), c.maxSendWr() + recvWr, "send " + c.maxSendWr() + " + recv " + recvWr);
        } else {
            fits(c.sendCq(), c.maxSendWr(), "send " + c.maxSendWr());
            fits(c.recvCq(), recvWr, "recv " + recvWr);
        }
        attr.fill((byte) 0);
        ibv_qp_init_attr.send_cq(attr, c.sendCq().cq());
        ibv_qp_init_attr.recv_cq(attr, c.recvCq().cq());
        ibv_qp_init_attr.srq(attr, c.srq() == null ? MemorySegment.NULL : c.srq().srq());
        MemorySegment cap = ibv_qp_init_attr.cap(attr);
        ibv_qp_cap.max_send_wr(cap, c.maxSendWr());
        ibv_qp_cap.max_recv_wr(cap, c.srq() == null ? c.maxRecvWr() : 0);
        ibv_qp_cap.max_send_sge(cap, c.maxSendSge());
        ibv_qp_cap.max_recv_sge(cap, c.srq() == null ? c.maxRecvSge() : 0);
        ibv_qp_cap.max_inline_data(cap, c.maxInlineData());
        ibv_qp_init_attr.qp_type(attr, c.type().code);
        ibv_qp_init_attr.sq_sig_all(attr, c.signalAll() ? 1 : 0);
    }

    /** What the provider granted, written back into the attributes by create: it may exceed the request. */
    static int grantedInline(MemorySegment attr) {
        return ibv_qp_cap.max_inline_data(ibv_qp_init_attr.cap(attr));
    }

    private static void limit(String what, int asked, int max, String dev, String attr) {
        if (asked > max) {
            throw new IllegalArgumentException(what + " " + asked + " exceeds " + dev + "'s " + attr + " of " + max);
        }
    }

    /**
     * Refuses a queue pair that, with every WR outstanding, could by itself overrun its CQ. It checks
     * this QP alone: QPs sharing a CQ, and receives from an SRQ (bounded by the SRQ, shared by its QPs),
     * are the caller's sum to make. If that sum is wrong the overrun is still not silent: the CQ's next
     * poll throws {@link CompletionQueueOverrunException}.
     */
    private static void fits(CompletionQueue cq, int depth, String what) {
        if (depth > cq.size()) {
            throw new IllegalArgumentException("queue pair depth (" + what + ") exceeds the " + cq.size()
                    + " entries of " + cq + ": completions could be dropped. Make the CQ at least " + depth
                    + " entries or the queue pair shallower");
        }
    }
}
