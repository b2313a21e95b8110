package org.rdmapanama.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The libc functions the runtime calls, each linked once, on first use of
 * this class. Those that fail through errno return {@code >= 0} on success
 * or {@code -errno}, as every native wrapper here does; {@link Errno#check}
 * turns a negative one into an exception. None of these is on the data path;
 * the variants for waits that repeat (an event loop's poll, an eventfd's
 * signal and drain) allocate nothing, in compiled code or not.
 */
public final class Libc {
    private Libc() {}

    /** {@code int poll(struct pollfd *, nfds_t, int)}. */
    private static final FunctionDescriptor POLL_TYPE = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);
    /** {@code ssize_t read(int, void *, size_t)}, and write's. */
    private static final FunctionDescriptor READ_WRITE_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);

    private static final MethodHandle POLL = Link.withErrno(Link.libc("poll"), POLL_TYPE);
    private static final MethodHandle EVENTFD = Link.withErrno(Link.libc("eventfd"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle FCNTL = Link.withErrno(Link.libc("fcntl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle READ = Link.withErrno(Link.libc("read"), READ_WRITE_TYPE);
    private static final MethodHandle WRITE = Link.withErrno(Link.libc("write"), READ_WRITE_TYPE);
    private static final MethodHandle CLOSE = Link.withErrno(Link.libc("close"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    // The same three without errno capture, for the calls a sleeping loop makes per wake-up. A handle
    // that captures errno takes a slice of the caller's capture segment on every call (the JDK's
    // SharedUtils.checkCaptureSegment): 40 B that only C2's escape analysis removes, and only where it
    // inlines the whole handle. A loop that sleeps per message makes a few hundred of these calls a
    // second, which left them in code that allocated (docs/results/2026-12-07-channel-jmh-gc.md).
    private static final MethodHandle POLL_NO_ERRNO = Link.plain(Link.libc("poll"), POLL_TYPE);
    private static final MethodHandle READ_NO_ERRNO = Link.plain(Link.libc("read"), READ_WRITE_TYPE);
    private static final MethodHandle WRITE_NO_ERRNO = Link.plain(Link.libc("write"), READ_WRITE_TYPE);
    private static final MethodHandle ALIGNED_ALLOC = Link.plain(Link.libc("aligned_alloc"),
            FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle FREE = Link.plain(Link.libc("free"), FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle STRERROR = Link.plain(Link.libc("strerror"),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
    private static final MethodHandle CLOCK_GETTIME = Link.plain(Link.libc("clock_gettime"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    private static final int CLOCK_THREAD_CPUTIME_ID = 3;
    private static final ThreadLocal<MemorySegment> TIMESPEC =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16, 8)); // freed with its thread

    /** {@code poll(2)} of {@code count} {@code struct pollfd}: how many are ready, or -errno. */
    public static int poll(MemorySegment fds, long count, int timeoutMillis) {
        return errnoCall("poll", state -> (int) POLL.invokeExact(state, fds, count, timeoutMillis));
    }

    /** {@code eventfd(2)}: the fd, or -errno. */
    public static int eventfd(int initial, int flags) {
        return errnoCall("eventfd", state -> (int) EVENTFD.invokeExact(state, initial, flags));
    }

    /** {@code fcntl(2)} with an int argument: its result, or -errno. */
    public static int fcntl(int fd, int command, int argument) {
        return errnoCall("fcntl", state -> (int) FCNTL.invokeExact(state, fd, command, argument));
    }

    /** {@code read(2)}: the bytes read, or -errno. */
    public static long read(int fd, MemorySegment buffer, long count) {
        return errnoCallLong("read", state -> (long) READ.invokeExact(state, fd, buffer, count));
    }

    /** {@code write(2)}: the bytes written, or -errno. */
    public static long write(int fd, MemorySegment buffer, long count) {
        return errnoCallLong("write", state -> (long) WRITE.invokeExact(state, fd, buffer, count));
    }

    /** {@code close(2)}: 0, or -errno (the fd is gone either way). */
    public static int close(int fd) {
        return errnoCall("close", state -> (int) CLOSE.invokeExact(state, fd));
    }

    /** Memory for the errno a call captures, for the calls below that take it from the caller. */
    public static MemorySegment allocateCallState(Arena arena) {
        return arena.allocate(Link.CALL_STATE);
    }

    // The calls of a wait that repeats: no arena, no lambda and no capture per call.

    /**
     * {@link #poll(MemorySegment, long, int)} that allocates nothing: poll(2)
     * without errno capture, and only when it fails a second poll that does not
     * wait, capturing errno in {@code state} (which allocates). What made poll
     * fail makes it fail again (a bad pollfd array, no memory), except EINTR:
     * the second poll then answers what is ready now, a timeout to the caller.
     */
    public static int poll(MemorySegment state, MemorySegment fds, long count, int timeoutMillis) {
        int rc;
        try {
            rc = (int) POLL_NO_ERRNO.invokeExact(fds, count, timeoutMillis);
            if (rc >= 0) {
                return rc;
            }
            rc = (int) POLL.invokeExact(state, fds, count, 0);
        } catch (Throwable t) {
            throw unexpected("poll", t);
        }
        return rc < 0 ? -Link.errno(state) : rc;
    }

    /**
     * {@code read(2)} that allocates nothing and does not say why it failed:
     * the bytes read, or -1. For an eventfd's drain, where the one failure to
     * expect is EAGAIN (the counter was 0 already).
     */
    public static long readNoErrno(int fd, MemorySegment buffer, long count) {
        try {
            return (long) READ_NO_ERRNO.invokeExact(fd, buffer, count);
        } catch (Throwable t) {
            throw unexpected("read", t);
        }
    }

    /**
     * {@code write(2)} that allocates nothing and does not say why it failed:
     * the bytes written, or -1. For an eventfd's signal, where the one failure
     * to expect is EAGAIN (the counter is full, which is readable too).
     */
    public static long writeNoErrno(int fd, MemorySegment buffer, long count) {
        try {
            return (long) WRITE_NO_ERRNO.invokeExact(fd, buffer, count);
        } catch (Throwable t) {
            throw unexpected("write", t);
        }
    }

    /** A call linked with errno capture, given the capture state to pass first. */
    private interface IntCall {
        int call(MemorySegment state) throws Throwable;
    }

    private interface LongCall {
        long call(MemorySegment state) throws Throwable;
    }

    /** Runs {@code call} with a fresh capture state: its result, or -errno where it failed. */
    private static int errnoCall(String function, IntCall call) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Link.CALL_STATE);
            int rc = call.call(state);
            return rc < 0 ? -Link.errno(state) : rc;
        } catch (Throwable t) {
            throw unexpected(function, t);
        }
    }

    private static long errnoCallLong(String function, LongCall call) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Link.CALL_STATE);
            long rc = call.call(state);
            return rc < 0 ? -Link.errno(state) : rc;
        } catch (Throwable t) {
            throw unexpected(function, t);
        }
    }

    /** {@code aligned_alloc(3)}: the memory, unscoped and of size 0, or NULL. */
    public static MemorySegment alignedAlloc(long alignment, long size) {
        try {
            return (MemorySegment) ALIGNED_ALLOC.invokeExact(alignment, size);
        } catch (Throwable t) {
            throw unexpected("aligned_alloc", t);
        }
    }

    /** {@code free(3)}. */
    public static void free(MemorySegment memory) {
        try {
            FREE.invokeExact(memory);
        } catch (Throwable t) {
            throw unexpected("free", t);
        }
    }

    /** {@code strerror(3)}: for example "Cannot allocate memory". */
    public static String strerror(int errno) {
        try {
            return ((MemorySegment) STRERROR.invokeExact(errno)).reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "unknown error";
        }
    }

    /** {@code clock_gettime(CLOCK_THREAD_CPUTIME_ID)}: the CPU time this thread used. */
    public static long threadCpuNanos() {
        MemorySegment ts = TIMESPEC.get();
        int rc;
        try {
            rc = (int) CLOCK_GETTIME.invokeExact(CLOCK_THREAD_CPUTIME_ID, ts);
        } catch (Throwable t) {
            throw unexpected("clock_gettime", t);
        }
        if (rc != 0) {
            throw new IllegalStateException("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        }
        return ts.get(JAVA_LONG, 0) * 1_000_000_000L + ts.get(JAVA_LONG, 8);
    }

    private static RuntimeException unexpected(String function, Throwable t) {
        if (t instanceof RuntimeException e) {
            return e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(function, t);
    }
}
