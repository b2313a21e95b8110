package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * What the event channels do with fds, on {@link Libc}: poll(2) with a timeout
 * and a wait in slices, fcntl(2) for O_NONBLOCK, and an eventfd(2) to wake a thread that polls.
 */
public final class Posix {
    private Posix() {}

    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;
    private static final int EFD_NONBLOCK = 04000;
    private static final int EFD_CLOEXEC = 02000000;
    private static final short POLLIN = 1;
    private static final short POLLERR = 8;
    private static final short POLLHUP = 16;
    private static final short POLLNVAL = 32;

    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    private static final StructLayout POLLFD = structLayout(JAVA_INT.withName("fd"),
            JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents"));

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
            int rc = Libc.poll(pfd, 1L, timeoutMillis);
            if (rc <= 0) {
                return rc == -Errno.EINTR ? 0 : rc; // the caller loops anyway
            }
            short revents = pfd.get(JAVA_SHORT, 6);
            if ((revents & POLLIN) != 0) {
                return 1; // read what is there first; the next poll reports the error alone
            }
            return (revents & POLLNVAL) != 0 ? -Errno.EBADF : (revents & (POLLERR | POLLHUP)) != 0 ? -Errno.EIO : 0;
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
        Errno.check(setNonBlocking(fd), "fcntl(O_NONBLOCK)", what);
    }

    /** Puts {@code fd} in non-blocking mode; returns 0 or -errno. */
    public static int setNonBlocking(int fd) {
        int flags = Libc.fcntl(fd, F_GETFL, 0);
        return flags < 0 ? flags : Libc.fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    }

    /** A non-blocking, close-on-exec eventfd; throws naming {@code what} on failure. */
    public static int eventFd(String what) throws RdmaException {
        return Errno.check(Libc.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), "eventfd", what);
    }

    /**
     * Native memory for the allocation-free calls ({@link #pollBoth(Scratch, int, int, int)},
     * {@link #signal(Scratch, int)}, {@link #drain(Scratch, int)}): made once, then used by
     * one thread at a time.
     */
    public static final class Scratch {
        private final MemorySegment pollFds;
        private final MemorySegment counter;
        private final MemorySegment state; // errno of a poll that failed

        public Scratch(Arena arena) {
            // Slices made here, never per call: a slice is an object.
            this.pollFds = arena.allocate(POLLFD, 2);
            this.counter = arena.allocate(JAVA_LONG);
            this.state = Libc.allocateCallState(arena);
        }
    }

    /** Adds 1 to eventfd {@code fd}, which makes it readable (a full counter, EAGAIN, is readable too). */
    public static void signal(int fd) {
        try (Arena a = Arena.ofConfined()) {
            signal(new Scratch(a), fd);
        }
    }

    /** {@link #signal(int)} in {@code s}: allocates nothing. */
    public static void signal(Scratch s, int fd) {
        s.counter.set(JAVA_LONG, 0, 1L);
        long rc = Libc.writeNoErrno(fd, s.counter, 8L);
        assert rc == 8 || rc == -1; // -1: EAGAIN, a full counter
    }

    /** Resets eventfd {@code fd} to 0 (not readable). */
    public static void drain(int fd) {
        try (Arena a = Arena.ofConfined()) {
            drain(new Scratch(a), fd);
        }
    }

    /** {@link #drain(int)} in {@code s}: allocates nothing. */
    public static void drain(Scratch s, int fd) {
        long rc = Libc.readNoErrno(fd, s.counter, 8L);
        assert rc == 8 || rc == -1; // -1: EAGAIN, already 0
    }

    /** close(2); the fd is gone whatever it returns. */
    public static void closeFd(int fd) {
        Libc.close(fd);
    }

    /** Bits of {@link #pollBoth}'s answer. */
    public static final int FIRST_READABLE = 1, SECOND_READABLE = 2, FIRST_FAILED = 4, SECOND_FAILED = 8;

    /**
     * Waits up to {@code timeoutMillis} (-1: no limit) until {@code first} or
     * {@code second} is readable. Returns a mask of {@link #FIRST_READABLE},
     * {@link #SECOND_READABLE}, {@link #FIRST_FAILED} and {@link #SECOND_FAILED}
     * (error, hang-up or not open, with nothing to read), 0 on timeout or EINTR, or -errno.
     */
    public static int pollBoth(int first, int second, int timeoutMillis) {
        try (Arena a = Arena.ofConfined()) {
            return pollBoth(new Scratch(a), first, second, timeoutMillis);
        }
    }

    /** {@link #pollBoth(int, int, int)} in {@code s}: allocates nothing. */
    public static int pollBoth(Scratch s, int first, int second, int timeoutMillis) {
        MemorySegment pfd = s.pollFds;
        pfd.set(JAVA_INT, 0, first);
        pfd.set(JAVA_SHORT, 4, POLLIN);
        pfd.set(JAVA_SHORT, 6, (short) 0);
        pfd.set(JAVA_INT, 8, second);
        pfd.set(JAVA_SHORT, 12, POLLIN);
        pfd.set(JAVA_SHORT, 14, (short) 0);
        int rc = Libc.poll(s.state, pfd, 2L, timeoutMillis);
        if (rc < 0) {
            return rc == -Errno.EINTR ? 0 : rc;
        }
        return readiness(pfd.get(JAVA_SHORT, 6), FIRST_READABLE, FIRST_FAILED)
                | readiness(pfd.get(JAVA_SHORT, 14), SECOND_READABLE, SECOND_FAILED);
    }

    private static int readiness(short revents, int readable, int failed) {
        if ((revents & POLLIN) != 0) {
            return readable; // read what is there first; the next poll reports the error alone
        }
        return (revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 ? failed : 0;
    }
}
