package org.rdmapanama.internal;

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
    private static final int EIO = 5;
    private static final int EBADF = 9;

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
                return e == 4 ? 0 : -e; // EINTR: the caller loops anyway
            }
            if (rc == 0) {
                return 0;
            }
            short revents = pfd.get(JAVA_SHORT, 6);
            if ((revents & POLLIN) != 0) {
                return 1; // read what is there first; the next poll reports the error alone
            }
            return (revents & POLLNVAL) != 0 ? -EBADF : (revents & (POLLERR | POLLHUP)) != 0 ? -EIO : 0;
        } catch (Throwable t) {
            throw new IllegalStateException("poll", t);
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
