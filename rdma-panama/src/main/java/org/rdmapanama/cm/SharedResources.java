package org.rdmapanama.cm;

import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.SharedReceiveQueue;

import java.util.Objects;

/**
 * Verbs objects that many connections use, made by the caller on a context
 * from {@link CmContexts#open} and closed by the caller once no connection
 * needs them. A connection made with them owns only its QP and cm_id; its
 * {@link ConnectionOptions#cqSize()} is ignored (the caller sized the CQs),
 * and with an SRQ its QP has no receive queue of its own (the options'
 * receive depth and SGEs are ignored too).
 *
 * @param pd     the protection domain of every QP (and of the memory they use)
 * @param sendCq where the QPs' send completions go
 * @param recvCq where their receive completions go (may be {@code sendCq})
 * @param srq    where their receives come from, or null for each QP's own receive queue
 */
public record SharedResources(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              SharedReceiveQueue srq) {
    public SharedResources {
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        if (CmContexts.handleOf(pd.context()) == null) {
            throw new IllegalArgumentException(pd + " is not on a context from CmContexts.open (or it is closed):"
                    + " rdma_create_qp takes only a PD of librdmacm's own context");
        }
        for (CompletionQueue cq : new CompletionQueue[] {sendCq, recvCq}) {
            if (cq.context() != pd.context()) {
                throw new IllegalArgumentException(cq + " is on another context than " + pd);
            }
        }
    }

    /** One CQ for sends and receives, no SRQ. */
    public SharedResources(ProtectionDomain pd, CompletionQueue cq) {
        this(pd, cq, cq, null);
    }

    public SharedResources withSrq(SharedReceiveQueue sharedReceiveQueue) {
        return new SharedResources(pd, sendCq, recvCq, sharedReceiveQueue);
    }

    public DeviceContext context() {
        return pd.context();
    }
}
