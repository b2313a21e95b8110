package org.rdmapanama.internal;

import org.rdmapanama.ProtectionDomain;
import org.rdmapanama.QueuePair;
import org.rdmapanama.QueuePairConfig;
import org.rdmapanama.RdmaException;

import java.lang.foreign.MemorySegment;

/**
 * Lets the connection layer ({@code org.rdmapanama.cm}) reach the few
 * package-private parts of the verbs objects it needs, without making them
 * public API: the JDK's SharedSecrets pattern.
 */
public final class Bridge {
    private Bridge() {}

    /** Implemented in {@code org.rdmapanama}; registered from a static initializer there. */
    public interface Verbs {
        MemorySegment pdHandle(ProtectionDomain pd);

        /** A context librdmacm owns, wrapped without taking ownership. */
        org.rdmapanama.DeviceContext borrowContext(MemorySegment ibvContext) throws RdmaException;

        /** Fills a {@code struct ibv_qp_init_attr} from {@code config}, validating it against the device. */
        void fillQpInitAttr(MemorySegment attr, ProtectionDomain pd, QueuePairConfig config);

        /**
         * Creates a QP with {@code make} (rdma_create_qp) while its CQs are held, and wraps it;
         * {@code destroyer} frees it (rdma_destroy_qp), also when wrapping fails.
         */
        QueuePair createQueuePair(ProtectionDomain pd, QueuePairConfig config, MemorySegment initAttr,
                                  QpMaker make, Destroyer destroyer) throws RdmaException;
    }

    public interface QpMaker {
        /** Creates the QP and returns its {@code ibv_qp*}. */
        MemorySegment make() throws RdmaException;
    }

    public interface Destroyer {
        void destroy(MemorySegment qp) throws RdmaException;
    }

    private static volatile Verbs verbs;

    public static void register(Verbs implementation) {
        verbs = implementation;
    }

    public static Verbs verbs() {
        if (verbs == null) {
            try {
                Class.forName(QueuePair.class.getName(), true, QueuePair.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new AssertionError(e);
            }
        }
        return verbs;
    }
}
