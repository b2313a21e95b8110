package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** The few libc calls that event channels need: poll(2) with a timeout and fcntl(2) for O_NONBLOCK. */
public final class Posix {
    private Posix() {}

    private static final Linker LINKER = Linker.nativeLinker();
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;
    private static final short POLLIN = 1;
    private static final short POLLERR = 8;
    private static final short POLLHUP = 16;
    private static final short POLLNVAL = 32;

    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    private static final StructLayout POLLFD = structLayout(JAVA_INT.withName("fd"),
            JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents"));

    private static final MethodHandle POLL = Verbs.linkWithErrno(LINKER.defaultLookup().findOrThrow("poll"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FCNTL = Verbs.linkWithErrno(LINKER.defaultLookup().findOrThrow("fcntl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));

    /**
     * Waits until {@code fd} is readable or {@code timeoutMillis} passes.
     * Returns 1 when readable, 0 on timeout or EINTR, -errno on failure. An fd
     * that reports only an error or hang-up (a removed device) is a failure,
     * -EIO, or -EBADF when it is not open: poll would return at once forever,
     * and a caller that read and looped would spin.
     */
    public static int pollIn(int fd, int timeoutMillis) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(POLLFD);
            pfd.set(JAVA_INT, 0, fd);
            pfd.set(JAVA_SHORT, 4, POLLIN);
            MemorySegment state = a.allocate(Verbs.CALL_STATE);
            int rc = (int) POLL.invokeExact(state, pfd, 1L, timeoutMillis);
            if (rc < 0) {
                int e = Verbs.errno(state);
                return e == Errno.EINTR ? 0 : -e; // the caller loops anyway
            }
            if (rc == 0) {
                return 0;
            }
            short revents = pfd.get(JAVA_SHORT, 6);
            if ((revents & POLLIN) != 0) {
                return 1; // read what is there first; the next poll reports the error alone
            }
            return (revents & POLLNVAL) != 0 ? -Errno.EBADF : (revents & (POLLERR | POLLHUP)) != 0 ? -Errno.EIO : 0;
        } catch (Throwable t) {
            throw new IllegalStateException("poll", t);
        }
    }

    /** Runs between poll slices; throws to end the wait (say, when the fd's owner was closed). */
    @FunctionalInterface
    public interface SliceCheck {
        void check() throws RdmaException;
    }

    /** The longest single poll: how long a virtual thread may stay pinned, and how late a close is noticed. */
    public static final int SLICE_MILLIS = 100;

    /**
     * Waits until {@code fd} is readable or {@code deadline} ({@link System#nanoTime})
     * passes, in polls of at most {@link #SLICE_MILLIS}; false on timeout. A
     * spent deadline still polls once, without waiting. {@code check} runs before
     * each slice and once more when poll fails (a closed owner's fd is gone, and
     * that is what poll saw: the check says so better).
     *
     * @param what names the fd in the failure, e.g. {@code "CompletionChannel on rxe0"}
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws RdmaException        when poll fails, or the fd reports only an error or hang-up
     */
    public static boolean awaitReadable(int fd, long deadline, String what, SliceCheck check)
            throws RdmaException, InterruptedException {
        while (true) {
            check.check();
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting on " + what);
            }
            long left = deadline - System.nanoTime();
            int ready = pollIn(fd, left <= 0 ? 0 : (int) Math.min(SLICE_MILLIS, Math.max(1, left / 1_000_000)));
            if (ready < 0) {
                check.check();
                throw Errno.failure("poll", what, ready);
            }
            if (ready > 0) {
                return true;
            }
            if (left <= 0) {
                return false;
            }
        }
    }

    /** Puts {@code fd} in non-blocking mode; throws naming {@code what} on failure. */
    public static void setNonBlocking(int fd, String what) throws RdmaException {
        int rc = setNonBlocking(fd);
        if (rc < 0) {
            throw Errno.failure("fcntl(O_NONBLOCK)", what, rc);
        }
    }

    /** Puts {@code fd} in non-blocking mode; returns 0 or -errno. */
    public static int setNonBlocking(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Verbs.CALL_STATE);
            int flags = (int) FCNTL.invokeExact(state, fd, F_GETFL, 0);
            if (flags < 0 || (int) FCNTL.invokeExact(state, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                return -Verbs.errno(state);
            }
            return 0;
        } catch (Throwable t) {
            throw new IllegalStateException("fcntl", t);
        }
    }
}
