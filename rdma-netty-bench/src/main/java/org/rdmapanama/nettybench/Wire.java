package org.rdmapanama.nettybench;

import java.lang.management.ManagementFactory;

/**
 * The request's first word after any framing: what the server does with it. A Netty frame is a 4-byte
 * length (of what follows) and the body, whose first int is the op; a channel message has no length (the
 * channel keeps boundaries), so the op is its first int. A request of S bytes is S bytes on the wire either
 * way; the server echoes S bytes.
 */
final class Wire {
    private Wire() {}

    /** Reply with the same bytes. */
    static final int ECHO = 1;
    /** Reply with the server's process CPU time in ns (a long after the op). */
    static final int CPU = 2;
    /** Reply with the CPU time, then the server exits. */
    static final int STOP = 3;
    /** Reply with the server's JIT compile time so far in ms (a long after the op): is its JIT done? */
    static final int JIT = 4;

    /** The smallest request: a Netty frame's length and op. */
    static final int MIN_SIZE = 8;
    /** The largest frame the decoders accept. */
    static final int MAX_FRAME = 16 << 20;

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** A control request's answer: the JIT's compile time for {@link #JIT}, else the CPU time. */
    static long answer(int op) {
        return op == JIT ? jitMillis() : processCpuNanos();
    }

    /** The JIT compilers' time so far in this process, ms. */
    static long jitMillis() {
        return ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
    }

    /** This process's CPU time (all threads, user and system), ns. */
    static long processCpuNanos() {
        return OS.getProcessCpuTime();
    }
}
