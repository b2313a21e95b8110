package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Taking a C object into a {@link ResourceLifecycle}: a wrapper never
 * publishes itself from its constructor; {@link #own} runs the constructor,
 * then registers the new object with its owner, and frees the C object if
 * either fails.
 */
public final class Ownership {
    private Ownership() {}

    /** Builds the Java object around a {@link Pending}, whose constructor makes a lifecycle of it. */
    @FunctionalInterface
    public interface Wrapper<T> {
        T wrap(Pending n) throws RdmaException;
    }

    /** Makes a child's C object from its owner's handle (the {@code ibv_create_*} call). */
    @FunctionalInterface
    public interface Maker {
        MemorySegment make(MemorySegment owner) throws RdmaException;
    }

    /** Frees a C object (the {@code ibv_destroy_*} call). */
    @FunctionalInterface
    public interface Freer {
        void free(MemorySegment raw) throws RdmaException;
    }

    /** A C object on its way into a lifecycle: the pointer, its struct's size, and its arena (none if guarded). */
    public static final class Pending {
        final MemorySegment raw;
        final long size;
        final Arena arena;
        ResourceLifecycle built;

        private Pending(MemorySegment raw, long size, boolean guarded) {
            this.raw = raw;
            this.size = size;
            this.arena = guarded ? null : Arena.ofShared();
        }

        /** The struct, readable for the constructor (e.g. a QP's number for its description). */
        public MemorySegment struct() {
            return raw.reinterpret(size);
        }
    }

    /**
     * Takes ownership of the C object {@code raw}: runs {@code wrapper}, whose
     * constructor must build a lifecycle of the {@link Pending} it is given,
     * then registers that with its owner and calls {@link ResourceLifecycle.Hooks#opened()}. If
     * any of that fails, {@code freer} frees {@code raw} and the failure is
     * rethrown: a native object whose Java wrapper failed is never left behind.
     * A {@code guarded} object has no arena (see {@link ResourceLifecycle}).
     */
    public static <T> T own(MemorySegment raw, long size, boolean guarded, Freer freer, Wrapper<T> wrapper)
            throws RdmaException {
        return own(new Pending(raw, size, guarded), freer, wrapper);
    }

    /**
     * Makes a child with {@code make}, given this object's handle, and owns it
     * as {@link #own} does. A guarded owner stays entered until the child is
     * registered with it or freed, so its close cannot free it in between.
     */
    public static <T> T ownChild(ResourceLifecycle owner, Maker make, long size, boolean guarded, Freer freer,
            Wrapper<T> wrapper) throws RdmaException {
        return owner.withHandle(h -> own(new Pending(make.make(h), size, guarded), freer, wrapper));
    }

    private static <T> T own(Pending n, Freer freer, Wrapper<T> wrapper) throws RdmaException {
        try {
            T resource = wrapper.wrap(n);
            if (n.built == null || n.built.address != n.raw.address()) {
                throw new IllegalStateException("the wrapper did not build its resource from the given Native");
            }
            n.built.publish();
            return resource;
        } catch (Throwable t) {
            try {
                if (n.built != null) {
                    n.built.state = ResourceLifecycle.CLOSED;
                }
                if (n.arena != null) {
                    n.arena.close(); // nobody else has seen the handle, so no call can hold it
                }
                freer.free(n.raw);
            } catch (Throwable alsoFailed) {
                t.addSuppressed(alsoFailed);
            }
            throw t;
        }
    }
}
