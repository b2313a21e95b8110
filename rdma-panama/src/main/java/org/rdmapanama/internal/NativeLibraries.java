package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.Rdma;

/**
 * Loads libibverbs.so.1 and librdmacm.so.1 once. The generated bindings
 * dlopen them in a static initializer, which fails with an unreadable
 * {@link ExceptionInInitializerError}; this turns that into one clear error.
 */
public final class NativeLibraries {
    private NativeLibraries() {}

    private static final Throwable LOAD_FAILURE = tryLoad();

    private static Throwable tryLoad() {
        try {
            Rdma.ibv_get_device_list$address();
            Rdma.rdma_create_event_channel$address();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** Throws unless both libraries are loaded. */
    public static void require() throws RdmaException {
        if (LOAD_FAILURE != null) {
            Throwable root = LOAD_FAILURE;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            throw new RdmaException("cannot load the RDMA libraries libibverbs.so.1 and librdmacm.so.1 ("
                    + root.getMessage() + "); install them with: apt-get install rdma-core ibverbs-providers librdmacm1",
                    LOAD_FAILURE);
        }
    }
}
