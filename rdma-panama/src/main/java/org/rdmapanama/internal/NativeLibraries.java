package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;

/**
 * Loads libibverbs.so.1 and librdmacm.so.1 once, and finds the symbols that
 * {@link NativeCall} links. The generated bindings dlopen the same libraries
 * in a static initializer, which fails with an unreadable
 * {@link ExceptionInInitializerError}; this turns that into one clear error.
 * Finding a symbol here does not initialize the generated per-function holder
 * class, which would link a second (unused) downcall handle for it.
 */
public final class NativeLibraries {
    private NativeLibraries() {}

    private static Throwable loadFailure;
    private static final SymbolLookup LIBRARIES = tryLoad();

    private static SymbolLookup tryLoad() {
        try {
            return SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global())
                    .or(SymbolLookup.libraryLookup("librdmacm.so.1", Arena.global()));
        } catch (RuntimeException e) {
            loadFailure = e;
            return null;
        }
    }

    /** Throws unless both libraries are loaded. */
    public static void require() throws RdmaException {
        if (loadFailure != null) {
            Throwable root = loadFailure;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            throw new RdmaException("cannot load the RDMA libraries libibverbs.so.1 and librdmacm.so.1 ("
                    + root.getMessage() + "); install them with: apt-get install rdma-core ibverbs-providers librdmacm1",
                    loadFailure);
        }
    }

    /** The address of {@code name} in libibverbs or librdmacm. */
    static MemorySegment symbol(String name) throws RdmaException {
        require();
        return LIBRARIES.find(name).orElseThrow(() -> new IllegalStateException(
                "symbol " + name + " is in neither libibverbs.so.1 nor librdmacm.so.1"));
    }
}
