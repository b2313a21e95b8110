package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

/**
 * One control-path C function linked with errno capture, and the two ways
 * rdma-core reports failure: a NULL pointer, or a non-zero int (the errno
 * value itself, or -1 with errno set). Boxing is fine here: none of these is
 * on the data path. The handle is adapted once to take an Object[]: unlike
 * {@code invokeWithArguments}, which adapts on every call (measured: it
 * dominated connection setup while the JVM was cold).
 */
public final class NativeCall {
    private final String name;
    private final MethodHandle spread;

    public NativeCall(String name, MemorySegment address, FunctionDescriptor descriptor) {
        this.name = name;
        MethodHandle handle = Verbs.linkWithErrno(address, descriptor);
        this.spread = handle.asType(handle.type().generic())
                .asSpreader(Object[].class, handle.type().parameterCount());
    }

    public String name() {
        return name;
    }

    /** Calls a function returning a pointer; NULL is a failure described by errno. */
    public MemorySegment pointer(String what, Object... args) throws RdmaException {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = call.allocate(Verbs.CALL_STATE);
            MemorySegment result = (MemorySegment) invoke(state, args);
            if (result.equals(MemorySegment.NULL)) {
                throw Errno.failure(name, what, Verbs.errno(state));
            }
            return result;
        }
    }

    /** Calls a function returning int; non-zero is a failure (the value, or errno when it is -1). */
    public int status(String what, Object... args) throws RdmaException {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = call.allocate(Verbs.CALL_STATE);
            int rc = (int) invoke(state, args);
            if (rc != 0) {
                int errno = rc == -1 ? Verbs.errno(state) : Math.abs(rc);
                throw Errno.failure(name, what, errno == 0 ? rc : errno);
            }
            return rc;
        }
    }

    /** Calls a function returning int and hands back -errno instead of throwing (for expected failures). */
    public int statusOrErrno(Object... args) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = call.allocate(Verbs.CALL_STATE);
            int rc = (int) invoke(state, args);
            return rc == 0 ? 0 : -(rc == -1 ? Verbs.errno(state) : Math.abs(rc));
        }
    }

    private Object invoke(MemorySegment state, Object[] args) {
        Object[] all = new Object[args.length + 1];
        all[0] = state;
        System.arraycopy(args, 0, all, 1, args.length);
        try {
            return (Object) spread.invokeExact(all);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(name + Arrays.toString(args) + ": unexpected exception", t);
        }
    }
}
