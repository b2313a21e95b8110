package org.rdmapanama.verbs;

import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.internal.DataPath;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * {@code struct ibv_srq}: one pool of receive buffers for many queue pairs.
 * Closing is refused while a QP still uses it.
 */
public final class SharedReceiveQueue extends NativeResource {
    private final ProtectionDomain pd;
    private final int maxSge;
    private final MemorySegment postFn;
    private final MemorySegment badWr;
    private final SingleReceive singleReceive;

    private SharedReceiveQueue(ProtectionDomain pd, Native srq, int maxSge) {
        super("SharedReceiveQueue on " + pd.context().device().name(), srq, pd);
        this.pd = pd;
        this.maxSge = maxSge;
        this.postFn = pd.context().postSrqRecvFn;
        this.badWr = MemorySegment.ofAddress(arena().allocate(ADDRESS).address()).reinterpret(ADDRESS.byteSize());
        this.singleReceive = new SingleReceive(arena());
    }

    static SharedReceiveQueue create(ProtectionDomain pd, int maxWr, int maxSge) throws RdmaException {
        DeviceCapabilities caps = pd.context().capabilities();
        String dev = pd.context().device().name();
        if (caps.maxSrq() == 0) {
            throw new TransportCapabilityException(dev + " has no shared receive queues (max_srq 0)");
        }
        if (maxWr < 1 || maxWr > caps.maxSrqWr()) {
            throw new IllegalArgumentException("SRQ depth " + maxWr + " out of range: " + dev + " allows 1.."
                    + caps.maxSrqWr() + " (max_srq_wr)");
        }
        if (maxSge < 1 || maxSge > caps.maxSrqSge()) {
            throw new IllegalArgumentException("SRQ SGEs " + maxSge + " out of range: " + dev + " allows 1.."
                    + caps.maxSrqSge() + " (max_srq_sge)");
        }
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment init = VerbsObjects.srqInitAttr(scratch, maxWr, maxSge);
            return pd.ownChild(h -> Verbs.Calls.CREATE_SRQ.pointer(dev + ", " + maxWr + "x" + maxSge, h, init),
                    VerbsObjects.SRQ_SIZE, raw -> Verbs.Calls.DESTROY_SRQ.status(dev, raw),
                    n -> new SharedReceiveQueue(pd, n, maxSge), false);
        }
    }

    MemorySegment srq() {
        return handle();
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    public ReceiveRequest newReceiveRequest(int chainLength, int sgePerWr) {
        checkOpen();
        if (sgePerWr > maxSge) {
            throw new IllegalArgumentException("SGEs per WR " + sgePerWr + " exceed the SRQ's " + maxSge);
        }
        return new ReceiveRequest(this, arena(), chainLength, sgePerWr, description());
    }

    /** {@code ibv_post_srq_recv}. */
    public void postRecv(ReceiveRequest request) throws RdmaException {
        if (request.owner != this) { // its memory lives and dies with its owner
            throw new IllegalArgumentException("this ReceiveRequest was built for " + request.owner + ", not " + this);
        }
        int rc;
        try {
            rc = DataPath.post(postFn, handle(), request.first(), badWr);
        } catch (IllegalStateException e) {
            throw translate(e);
        }
        if (rc != 0) {
            throw Errno.failure("ibv_post_srq_recv", description(), rc);
        }
    }

    /**
     * {@code ibv_post_srq_recv} of one receive: {@link QueuePair#postRecv(MemoryRegion, long, int, long)}'s
     * twin, from any thread, allocating nothing.
     *
     * @throws IllegalArgumentException if the buffer is not inside {@code region}, or it lacks LOCAL_WRITE
     * @throws ClosedResourceException  if this SRQ or {@code region} is closed
     */
    public void postRecv(MemoryRegion region, long offset, int length, long wrId) throws RdmaException {
        int rc = singleReceive.post(this, postFn, badWr, region, offset, length, wrId);
        if (rc != 0) {
            throw Errno.failure("ibv_post_srq_recv", description(), rc);
        }
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DESTROY_SRQ.status(description(), raw);
    }
}
