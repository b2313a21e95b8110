package org.rdmapanama.internal;

import org.junit.jupiter.api.Test;
import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * poll(2) as the event watchers see it, on a pipe: an fd that only reports
 * hang-up must come back as a failure, or a watcher loops at full speed. And
 * the one wait loop the channels share, and the one failure message.
 */
class PosixTest {
    private static final Linker C = Linker.nativeLinker();
    private static final MethodHandle PIPE = C.downcallHandle(C.defaultLookup().findOrThrow("pipe"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle WRITE = C.downcallHandle(C.defaultLookup().findOrThrow("write"),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = C.downcallHandle(C.defaultLookup().findOrThrow("close"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    @Test
    void readableEmptyHungUpAndClosedFdsAreTold() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment fds = a.allocate(JAVA_INT, 2);
            assertEquals(0, (int) PIPE.invokeExact(fds));
            int r = fds.getAtIndex(JAVA_INT, 0), w = fds.getAtIndex(JAVA_INT, 1);
            try {
                assertEquals(0, Posix.setNonBlocking(r));
                assertEquals(0, Posix.pollIn(r, 10), "an empty pipe times out");
                assertEquals(1L, (long) WRITE.invokeExact(w, a.allocateFrom("x"), 1L));
                assertEquals(1, Posix.pollIn(r, 10), "a pipe with a byte is readable");
                assertEquals(0, (int) CLOSE.invokeExact(w));
                w = -1;
                assertEquals(1, Posix.pollIn(r, 10), "data still unread is reported before the hang-up");
            } finally {
                if (w >= 0) {
                    int ignored = (int) CLOSE.invokeExact(w);
                }
            }
            MemorySegment drop = a.allocate(8);
            MethodHandle read = C.downcallHandle(C.defaultLookup().findOrThrow("read"),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
            assertEquals(1L, (long) read.invokeExact(r, drop, 8L));
            assertEquals(-5, Posix.pollIn(r, 10), "a hung-up pipe with nothing left is EIO, not 'readable'");
            assertEquals(0, (int) CLOSE.invokeExact(r));
        }
        assertEquals(-9, Posix.pollIn(999_999, 10), "an fd that is not open is EBADF");
    }

    @Test
    void awaitReadableTimesOutWaitsAndFails() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment fds = a.allocate(JAVA_INT, 2);
            assertEquals(0, (int) PIPE.invokeExact(fds));
            int r = fds.getAtIndex(JAVA_INT, 0), w = fds.getAtIndex(JAVA_INT, 1);
            try {
                int[] checks = {0};
                long start = System.nanoTime();
                assertFalse(Posix.awaitReadable(r, start + 250_000_000L, "pipe", () -> checks[0]++));
                assertTrue(System.nanoTime() - start >= 250_000_000L, "waited the whole timeout");
                assertTrue(checks[0] >= 3, "checked between 100 ms slices, " + checks[0] + " times");
                assertFalse(Posix.awaitReadable(r, System.nanoTime(), "pipe", () -> {}), "a spent deadline polls once");
                assertEquals(1L, (long) WRITE.invokeExact(w, a.allocateFrom("x"), 1L));
                assertTrue(Posix.awaitReadable(r, System.nanoTime(), "pipe", () -> {}));

                RdmaException closed = new RdmaException("closed");
                assertSame(closed, assertThrows(RdmaException.class,
                        () -> Posix.awaitReadable(r, System.nanoTime() + 1_000_000_000L, "pipe", () -> { throw closed; })));
                Thread.currentThread().interrupt();
                InterruptedException i = assertThrows(InterruptedException.class,
                        () -> Posix.awaitReadable(r, System.nanoTime() + 1_000_000_000L, "pipe", () -> {}));
                assertEquals("interrupted while waiting on pipe", i.getMessage());
            } finally {
                int ignored = (int) CLOSE.invokeExact(w);
                ignored = (int) CLOSE.invokeExact(r);
            }
        }
        RdmaException e = assertThrows(RdmaException.class,
                () -> Posix.awaitReadable(999_999, System.nanoTime() + 1_000_000_000L, "fd 999999", () -> {}));
        assertEquals("poll", e.verb());
        assertEquals(Errno.EBADF, e.errno());
        assertEquals("poll on fd 999999 failed: EBADF (Bad file descriptor)", e.getMessage());
    }

    /**
     * An event loop's wake-up (signal, poll, drain) allocates nothing from its first calls on,
     * interpreted or in C1's code: a downcall that captured errno allocated 40 B a call there
     * (a slice of the capture segment), which only C2's escape analysis removed. A loop that sleeps
     * per message makes a few hundred of these a second, and stayed in that code.
     */
    @Test
    void aWakeUpAllocatesNothingBeforeTheJitCompilesIt() throws Throwable {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        int first = Posix.eventFd("first"), second = Posix.eventFd("second");
        try (Arena a = Arena.ofConfined()) {
            Posix.Scratch s = new Posix.Scratch(a);
            for (int i = 0; i < 2_000; i++) { // class loading, and the JDK's one-time method-handle work
                wakeUp(s, first, second);
            }
            // Up to 5 rounds: the JDK may still spin a method handle's code once (a few KB) on this thread.
            // With the capture, every round allocated 120 B a wake-up; C2 had not removed it by the 7,000th.
            long bytes = -1;
            for (int round = 0; round < 5 && bytes != 0; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 1_000; i++) {
                    wakeUp(s, first, second);
                }
                bytes = threads.getCurrentThreadAllocatedBytes() - before;
            }
            assertEquals(0, bytes, "bytes allocated by 1,000 wake-ups");
        } finally {
            Posix.closeFd(first);
            Posix.closeFd(second);
        }
    }

    private static void wakeUp(Posix.Scratch s, int first, int second) {
        Posix.signal(s, second);
        if (Posix.pollBoth(s, first, second, -1) != Posix.SECOND_READABLE) {
            throw new AssertionError("the signalled eventfd alone is readable");
        }
        Posix.drain(s, second);
    }

    /** The allocation-free poll still says why it failed: poll(2) refuses more fds than a process may open. */
    @Test
    void aFailedPollStillTellsItsErrno() {
        try (Arena a = Arena.ofConfined()) {
            assertEquals(-Errno.EINVAL, Libc.poll(Libc.allocateCallState(a), a.allocate(16), 1L << 30, 0));
        }
    }

    @Test
    void oneFailureMessage() {
        assertEquals("ibv_alloc_pd on rxe0 failed: ENOMEM (Cannot allocate memory)",
                Errno.message("ibv_alloc_pd", "rxe0", Errno.ENOMEM));
        assertEquals("rdma_get_cm_event failed: EAGAIN (Resource temporarily unavailable)",
                Errno.message("rdma_get_cm_event", "", Errno.EAGAIN));
        assertTrue(Errno.message("ibv_reg_mr", "siw0", 0).endsWith("refused it without an errno (VERBS_LOG_LEVEL=5 may say why)"));
        RdmaException e = Errno.failure("ibv_post_send", "QueuePair RC 7 on rxe0", -Errno.EINVAL, " (hint)");
        assertEquals("ibv_post_send", e.verb());
        assertEquals(Errno.EINVAL, e.errno(), "an inline verb's negative return is the errno");
        assertEquals("ibv_post_send on QueuePair RC 7 on rxe0 failed: EINVAL (Invalid argument) (hint)", e.getMessage());
        assertEquals("errno 4095 (Unknown error 4095)", Errno.describe(4095));
    }
}
