package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.MemorySegment;

/**
 * Lets the connection layer ({@code org.rdmapanama.cm}) reach the few
 * package-private parts of the verbs objects it needs, without making them
 * public API: the JDK's SharedSecrets pattern. The verbs types are type
 * parameters, so that this package does not depend on {@code org.rdmapanama.verbs}
 * (which depends on it): {@code C} is {@code DeviceContext}, {@code P}
 * {@code ProtectionDomain}, {@code Q} {@code QueuePair}, {@code K}
 * {@code QueuePairConfig}.
 */
public final class Bridge {
    private Bridge() {}

    /** Implemented in {@code org.rdmapanama.verbs}; registered by {@code NativeResource}'s static initializer. */
    public interface Verbs<C, P, Q, K> {
        /** A context librdmacm owns, wrapped without taking ownership. */
        C borrowContext(MemorySegment ibvContext) throws RdmaException;

        /** {@link #borrowContext(MemorySegment)}, calling {@code release} when the wrapper closes (or fails to wrap). */
        C borrowContext(MemorySegment ibvContext, Destroyer release) throws RdmaException;

        /** Fills a {@code struct ibv_qp_init_attr} from {@code config}, validating it against the device. */
        void fillQpInitAttr(MemorySegment attr, P pd, K config);

        /**
         * Creates a QP with {@code make} (rdma_create_qp) while its CQs are held, and wraps it;
         * {@code destroyer} frees it (rdma_destroy_qp), also when wrapping fails.
         */
        Q createQueuePair(P pd, K config, MemorySegment initAttr, QpMaker make, Destroyer destroyer)
                throws RdmaException;
    }

    public interface QpMaker {
        /** Creates the QP in the PD {@code pd} (its handle) and returns its {@code ibv_qp*}. */
        MemorySegment make(MemorySegment pd) throws RdmaException;
    }

    public interface Destroyer {
        void destroy(MemorySegment qp) throws RdmaException;
    }

    private static volatile Verbs<?, ?, ?, ?> verbs;

    public static void register(Verbs<?, ?, ?, ?> implementation) {
        verbs = implementation;
    }

    /** The caller names the verbs types; there is one implementation, so the cast holds. */
    @SuppressWarnings("unchecked")
    public static <C, P, Q, K> Verbs<C, P, Q, K> verbs() {
        Verbs<?, ?, ?, ?> v = verbs;
        if (v == null) {
            throw new IllegalStateException("the verbs bridge is used before any verbs resource exists");
        }
        return (Verbs<C, P, Q, K>) v;
    }
}
