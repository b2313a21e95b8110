package org.rdmapanama.internal;

import java.lang.foreign.MemorySegment;

/**
 * Page-aligned native memory from libc ({@link Libc#alignedAlloc}), freed explicitly: for a buffer whose
 * lifetime a {@code NativeResource} already guards with its own arena (a
 * memory region's, which hands the buffer out scoped to that arena). A second
 * arena for the buffer would cost a second handshake with every thread when
 * closed; allocating it from the region's arena would free it before the
 * region's {@code ibv_dereg_mr}, while the device may still write to it.
 * Not counted in NMT or against MaxDirectMemorySize.
 * Linked on first use (class initialization).
 */
public final class NativeMemory {
    private NativeMemory() {}

    /**
     * {@code size} zeroed bytes starting on a multiple of {@code alignment}
     * (a power of two), as {@code Arena.allocate} gives them; unscoped: the
     * caller scopes the segment it hands out and calls {@link #free} once.
     *
     * @throws OutOfMemoryError if libc has no memory for it
     */
    public static MemorySegment allocate(long size, long alignment) {
        if (size <= 0 || alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("size " + size + ", alignment " + alignment);
        }
        long rounded = (size + alignment - 1) & -alignment; // C11 asks for a multiple of the alignment
        MemorySegment p = Libc.alignedAlloc(alignment, rounded);
        if (p.equals(MemorySegment.NULL)) {
            throw new OutOfMemoryError("cannot allocate " + size + " bytes of native memory");
        }
        return p.reinterpret(size).fill((byte) 0);
    }

    /** Frees what {@link #allocate} returned. */
    public static void free(MemorySegment memory) {
        Libc.free(MemorySegment.ofAddress(memory.address()));
    }
}
