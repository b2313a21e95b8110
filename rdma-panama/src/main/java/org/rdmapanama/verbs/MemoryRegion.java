package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.NativeMemory;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;

import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * {@code struct ibv_mr}: memory the device may access, zero-copy. Either the
 * caller's native segment ({@link ProtectionDomain#register}) or memory this
 * region allocated and owns ({@link ProtectionDomain#allocate}); in the latter
 * case {@link #segment()} becomes unusable when the region is closed.
 */
public final class MemoryRegion extends NativeResource {
    /** Registered buffers start on a page, which the HCA's translation tables like. */
    static final long PAGE_SIZE = 4096;

    private final MemorySegment segment;
    private final MemorySegment ownedMemory; // unscoped; null when the caller owns the memory
    private boolean deregistered;           // set by destroy, read by released, both under close's lock
    private final int lkey;
    private final int rkey;
    private final Set<Access> access;

    private MemoryRegion(ProtectionDomain pd, Native mr, MemorySegment memory, boolean owned, Set<Access> access) {
        super("MemoryRegion of " + memory.byteSize() + " bytes on " + pd.context().device().name(), mr, pd);
        // Memory we own lives in the region's arena: one close, one handshake, and unusable before the dereg.
        this.segment = owned ? memory.reinterpret(arena(), null) : memory;
        this.ownedMemory = owned ? memory : null;
        this.lkey = VerbsObjects.lkey(handle());
        this.rkey = VerbsObjects.rkey(handle());
        this.access = Set.copyOf(access);
    }

    static MemoryRegion register(ProtectionDomain pd, MemorySegment memory, Set<Access> access)
            throws RdmaException {
        return pd.ownChild(h -> registerRaw(pd, h, memory, access), VerbsObjects.MR_SIZE, MemoryRegion::deregister,
                n -> new MemoryRegion(pd, n, memory, false, access), false);
    }

    static MemoryRegion allocate(ProtectionDomain pd, long size, Set<Access> access) throws RdmaException {
        if (size <= 0) {
            throw new IllegalArgumentException("memory region size must be positive, got " + size);
        }
        MemorySegment buffer = NativeMemory.allocate(size, PAGE_SIZE);
        boolean[] registered = {false};
        boolean ok = false;
        try {
            MemoryRegion region = pd.ownChild(h -> {
                        MemorySegment raw = registerRaw(pd, h, buffer, access);
                        registered[0] = true;
                        return raw;
                    }, VerbsObjects.MR_SIZE, r -> {
                        deregister(r);
                        registered[0] = false;
                    }, n -> new MemoryRegion(pd, n, buffer, true, access), false);
            ok = true;
            return region;
        } finally {
            if (!ok && !registered[0]) {
                NativeMemory.free(buffer); // never registered, or deregistered by own(); a failed dereg keeps it
            }
        }
    }

    private static MemorySegment registerRaw(ProtectionDomain pd, MemorySegment pdHandle, MemorySegment memory,
                                             Set<Access> access)
            throws RdmaException {
        if (!memory.isNative()) {
            throw new IllegalArgumentException("only native memory can be registered; got a heap segment "
                    + "(allocate with an Arena, or use ProtectionDomain.allocate)");
        }
        if (memory.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        long max = pd.context().capabilities().maxMrSize();
        if (max > 0 && Long.compareUnsigned(memory.byteSize(), max) > 0) {
            throw new IllegalArgumentException("cannot register " + memory.byteSize() + " bytes: "
                    + pd.context().device().name() + " allows at most " + max + " (max_mr_size)");
        }
        return Verbs.Calls.REG_MR.pointer(
                pd.context().device().name() + ", " + memory.byteSize() + " bytes, access " + access,
                pdHandle, memory, memory.byteSize(), Access.mask(access));
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return segment;
    }

    /** Local key: goes into scatter/gather entries. */
    public int lkey() {
        return lkey;
    }

    /** Remote key: what a peer needs, with {@link #address()}, to RDMA Read/Write/atomic here. */
    public int rkey() {
        return rkey;
    }

    /** The virtual address of the first byte, as a peer addresses it. */
    public long address() {
        return segment.address();
    }

    public long length() {
        return segment.byteSize();
    }

    public Set<Access> access() {
        return access;
    }

    /** What a peer needs to access this region: address, rkey and length. */
    public RemoteBuffer remote() {
        return new RemoteBuffer(address(), rkey, segment.byteSize());
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DEREG_MR.status(description(), raw);
        deregistered = true;
    }

    private static void deregister(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DEREG_MR.status("a memory region whose wrapper failed", raw);
    }

    @Override
    void released() {
        // A region whose dereg failed may still be written by the device: its memory is left allocated.
        if (ownedMemory != null && deregistered) {
            NativeMemory.free(ownedMemory);
        }
    }
}
