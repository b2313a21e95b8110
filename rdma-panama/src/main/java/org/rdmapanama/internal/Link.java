package org.rdmapanama.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * The one place that makes downcall handles: to libc's symbols, to
 * libibverbs' and librdmacm's ({@link NativeLibraries}), and to the
 * function pointers of a context's ops table ({@link DataPath}).
 * A handle linked {@link #withErrno} takes the errno capture segment
 * ({@link #CALL_STATE}) as its first argument.
 */
final class Link {
    private Link() {}

    private static final Linker LINKER = Linker.nativeLinker();
    static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(groupElement("errno"));

    /** {@code name} in the C library. */
    static MemorySegment libc(String name) {
        return LINKER.defaultLookup().findOrThrow(name);
    }

    /** A function that reports no errno (or whose errno nobody reads). */
    static MethodHandle plain(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor);
    }

    /** A function that sets errno on failure: the handle's first argument receives it. */
    static MethodHandle withErrno(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor, Linker.Option.captureCallState("errno"));
    }

    /** A handle whose first argument is the function's address (a pointer from an ops table). */
    static MethodHandle unbound(FunctionDescriptor descriptor, Linker.Option... options) {
        return LINKER.downcallHandle(descriptor, options);
    }

    /** The errno a {@link #withErrno} call captured in {@code callState}. */
    static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }
}
