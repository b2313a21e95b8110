package org.rdmapanama.internal;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * poll(2) as the event watchers see it, on a pipe: an fd that only reports
 * hang-up must come back as a failure, or a watcher loops at full speed.
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
}
