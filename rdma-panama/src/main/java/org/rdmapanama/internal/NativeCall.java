package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * One control-path C function linked with errno capture, and the two ways
 * rdma-core reports failure: a NULL pointer, or a non-zero int (the errno
 * value itself, or -1 with errno set). Boxing is fine here: none of these is
 * on the data path. The handle is adapted once to take an Object[]: unlike
 * {@code invokeWithArguments}, which adapts on every call and so would
 * dominate connection setup while the JVM is cold.
 * <p>
 * It is linked on its first call, not when declared: linking spins classes
 * (costly on a cold JVM), and a run uses a
 * few of the verbs declared ({@code devices} two of the 36). The descriptor
 * is written at the declaration, so that declaring does not touch the
 * generated per-function class (whose initializer links its own handle);
 * a host test holds each one equal to the generated descriptor.
 */
public final class NativeCall {
    /**
     * {@code -Drdma.callTimes=true}: each call's count, wall time and the calling thread's CPU time, printed to
     * stderr at exit, to hold a connection's set-up cost call by call against a C program's. A plain read when
     * off: these are control-path calls, each of which already opens an arena.
     */
    private static volatile boolean timed = Boolean.getBoolean("rdma.callTimes");
    private static final List<NativeCall> ALL = new CopyOnWriteArrayList<>();

    static {
        if (timed) {
            Libc.threadCpuNanos(); // links clock_gettime now, not inside the first timed call
            Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.print(times()), "rdma.callTimes"));
        }
    }

    private final String name;
    private final LongAdder calls = new LongAdder();
    private final LongAdder nanos = new LongAdder();
    private final LongAdder cpuNanos = new LongAdder();
    private final FunctionDescriptor descriptor;
    private volatile MethodHandle spread; // two threads may both link: the same handle, harmless

    public NativeCall(String name, FunctionDescriptor descriptor) {
        this.name = name;
        this.descriptor = descriptor;
        ALL.add(this);
    }

    /** Starts or stops timing (tests; a run sets {@code -Drdma.callTimes=true}). */
    static void timeCalls(boolean on) {
        timed = on;
    }

    /** The table printed at exit: calls made while timed, most wall time first. */
    static String times() {
        StringBuilder out = new StringBuilder(
                "rdma.callTimes: call, calls, wall ms, wall us/call, thread CPU ms, thread CPU us/call\n");
        ALL.stream().filter(c -> c.calls.sum() > 0)
                .sorted(Comparator.comparingLong((NativeCall c) -> c.nanos.sum()).reversed())
                .forEach(c -> out.append(String.format(Locale.ROOT, "rdma.callTimes: %-28s %8d %10.1f %10.1f %10.1f %10.1f%n",
                        c.name, c.calls.sum(), c.nanos.sum() / 1e6, c.nanos.sum() / 1e3 / c.calls.sum(),
                        c.cpuNanos.sum() / 1e6, c.cpuNanos.sum() / 1e3 / c.calls.sum())));
        return out.toString();
    }

    public String name() {
        return name;
    }

    /** The C signature as declared, without errno capture. */
    public FunctionDescriptor descriptor() {
        return descriptor;
    }

    private MethodHandle spread() throws RdmaException {
        MethodHandle s = spread;
        if (s == null) {
            MethodHandle handle = Link.withErrno(NativeLibraries.symbol(name), descriptor);
            s = handle.asType(handle.type().generic()).asSpreader(Object[].class, handle.type().parameterCount());
            spread = s;
        }
        return s;
    }

    /** Links it now rather than on its first call (a listener readies what its first accept will call). */
    public void link() throws RdmaException {
        spread();
    }

    /** Calls a function returning a pointer; NULL is a failure described by errno. */
    public MemorySegment pointer(String what, Object... args) throws RdmaException {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = call.allocate(Link.CALL_STATE);
            MemorySegment result = (MemorySegment) invoke(state, args);
            if (result.equals(MemorySegment.NULL)) {
                throw Errno.failure(name, what, -Link.errno(state));
            }
            return result;
        }
    }

    /**
     * Calls a function returning an int status: 0 (or a count) on success,
     * else -errno, whether it answered -1 and set errno or returned the errno
     * value itself. Throws only when the libraries cannot be loaded.
     */
    public int call(Object... args) {
        try {
            return callOrThrow(args);
        } catch (RdmaException e) {
            // Only when the libraries are missing, and then no object to call this on exists.
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** {@link #call}, with a failure thrown naming this function and {@code what}. */
    public int status(String what, Object... args) throws RdmaException {
        return Errno.check(callOrThrow(args), name, what);
    }

    private int callOrThrow(Object[] args) throws RdmaException {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = call.allocate(Link.CALL_STATE);
            int rc = (int) invoke(state, args);
            if (rc == -1) {
                int errno = Link.errno(state);
                return errno == 0 ? rc : -errno;
            }
            return Errno.ofStatus(rc);
        }
    }

    private Object invoke(MemorySegment state, Object[] args) throws RdmaException {
        MethodHandle s = spread();
        Object[] all = new Object[args.length + 1];
        all[0] = state;
        System.arraycopy(args, 0, all, 1, args.length);
        boolean timing = timed;
        long c0 = timing ? Libc.threadCpuNanos() : 0;
        long t0 = timing ? System.nanoTime() : 0;
        try {
            return (Object) s.invokeExact(all);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(name + Arrays.toString(args) + ": unexpected exception", t);
        } finally {
            if (timing) {
                long t1 = System.nanoTime();
                cpuNanos.add(Libc.threadCpuNanos() - c0);
                nanos.add(t1 - t0);
                calls.increment();
            }
        }
    }
}
