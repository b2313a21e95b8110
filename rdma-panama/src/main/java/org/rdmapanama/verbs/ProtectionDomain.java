package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Verbs;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code struct ibv_pd}: the scope in which memory regions and queue pairs
 * may be used together. Closing it closes its QPs, SRQs and MRs first.
 */
public final class ProtectionDomain extends NativeResource {
    private final DeviceContext context;

    ProtectionDomain(DeviceContext context, Native pd) {
        super("ProtectionDomain on " + context.device().name(), pd, context);
        this.context = context;
    }

    public DeviceContext context() {
        return context;
    }

    /**
     * Registers the caller's native memory, zero-copy: the segment is the
     * buffer the device reads and writes. The caller keeps it alive for as
     * long as the region is registered.
     */
    public MemoryRegion register(MemorySegment memory, Access... access) throws RdmaException {
        checkOpen();
        return MemoryRegion.register(this, memory, accessSet(access));
    }

    /** Allocates {@code size} bytes, page-aligned and zeroed, owned by the region, and registers them. */
    public MemoryRegion allocate(long size, Access... access) throws RdmaException {
        checkOpen();
        return MemoryRegion.allocate(this, size, accessSet(access));
    }

    private static Set<Access> accessSet(Access[] access) {
        Set<Access> set = EnumSet.of(Access.LOCAL_WRITE);
        set.addAll(Set.of(access));
        return set;
    }

    /** Creates a queue pair; see {@link QueuePairConfig}. */
    public QueuePair createQueuePair(QueuePairConfig config) throws RdmaException {
        checkOpen();
        return QueuePair.create(this, config);
    }

    /** {@code ibv_create_srq}: one receive queue shared by many QPs. */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException {
        checkOpen();
        return SharedReceiveQueue.create(this, maxWr, maxSge);
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DEALLOC_PD.status(context.device().name(), raw);
    }
}
