package org.rdmapanama.verbs;

import org.rdmapanama.error.CompletionQueueOverrunException;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.internal.QpAttributes;

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
        QpAttributes.fillInit(attr, c.sendCq().cq(), c.recvCq().cq(), c.srq() == null ? MemorySegment.NULL : c.srq().srq(),
                c.type().code, c.signalAll(), c.maxSendWr(), recvWr, c.maxSendSge(),
                c.srq() == null ? c.maxRecvSge() : 0, c.maxInlineData());
    }

    /** What the provider granted, written back into the attributes by create: it may exceed the request. */
    static int grantedInline(MemorySegment attr) {
        return QpAttributes.grantedInline(attr);
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
