package org.rdmapanama.bench;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.ToLongFunction;

/**
 * How much work the JIT has done so far, so that a warm-up can run until the
 * JIT is idle. A fixed warm-up is not enough under emulation: a C2 compile
 * there takes seconds, and the compiler threads share the benchmark's pinned
 * CPU, so a timed run that starts while they still work is slowed by them
 * (the lab's profile showed them at a third of the CPU in a 1,000-iteration run).
 * <p>
 * It is the CPU time of the JIT's compiler threads, from
 * {@code /proc/self/task} (RDMA here is Linux-only): it grows while a compile
 * is under way, not only when one ends, as the JVM's compilation time does.
 */
public final class JitActivity {
    private static final Path TASKS = Path.of("/proc/self/task");

    /** A warm-up goes on until the JIT has been idle this long. */
    public static final long QUIET_NANOS = java.time.Duration.ofSeconds(1).toNanos();

    private JitActivity() {}

    /**
     * How often a {@link Watch} reads /proc: a warm-up round can take a few ms, and reading every
     * compiler thread's stat each round would itself give the JIT work (its parsing code gets hot).
     */
    public static final long SAMPLE_NANOS = java.time.Duration.ofMillis(100).toNanos();

    /** Tells, round after round, whether the JIT has worked within the last {@link #QUIET_NANOS}. */
    public static final class Watch {
        private long seen = now();
        private long changedAt;
        private long sampledAt;

        /** {@code start}: when the warm-up began ({@link System#nanoTime}), which counts as activity. */
        public Watch(long start) {
            changedAt = start;
            sampledAt = start;
        }

        /** Reads the JIT's counter at {@code now} (at most every {@link #SAMPLE_NANOS}) and says whether it is still busy. */
        public boolean busy(long now) {
            if (now - sampledAt >= SAMPLE_NANOS) {
                sampledAt = now;
                long jit = now();
                if (jit != seen) {
                    seen = jit;
                    changedAt = now;
                }
            }
            return now - changedAt < QUIET_NANOS;
        }
    }

    /**
     * A counter (clock ticks) that changes while the JIT works; compare two readings. It can also
     * drop, when HotSpot retires a compiler thread: that counts as activity too. Without
     * {@code /proc} (or with compiler threads named otherwise, as JVMCI's) it stays 0, and a
     * warm-up then lasts its 1 s minimum.
     */
    public static long now() {
        return Math.max(0, compilerThreadTicks());
    }

    /** utime + stime of the threads HotSpot names "C1/C2 CompilerThre…", or -1 if /proc cannot say. */
    public static long compilerThreadTicks() {
        return sumOverThreads("stat", JitActivity::compilerTicks);
    }

    /**
     * Context switches, voluntary and not, of the process's live threads
     * ({@code /proc/self/task/}*{@code /status}), or -1 if /proc cannot say:
     * each is a thread handing over or being preempted, which a hand-off
     * between threads costs and a single-threaded C program does not.
     */
    public static long contextSwitches() {
        try {
            return sumOverThreads("status", status -> status.lines()
                    .filter(l -> l.startsWith("voluntary_ctxt_switches:") || l.startsWith("nonvoluntary_ctxt_switches:"))
                    .mapToLong(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).trim()))
                    .sum());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The sum of {@code value} over the file {@code name} of each of the process's live threads
     * ({@code /proc/self/task/}*{@code /name}); a thread that ends between the listing and the
     * read, or whose value is negative, does not count. -1 if /proc cannot say, or no thread counted.
     */
    private static long sumOverThreads(String name, ToLongFunction<String> value) {
        long sum = 0;
        boolean any = false;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String text;
                try {
                    text = Files.readString(task.resolve(name));
                } catch (IOException gone) {
                    continue;
                }
                long v = value.applyAsLong(text);
                if (v >= 0) {
                    sum += v;
                    any = true;
                }
            }
        } catch (IOException | DirectoryIteratorException | SecurityException e) {
            return -1;
        }
        return any ? sum : -1;
    }

    /** From one {@code /proc/.../stat} line: utime + stime if the thread is a JIT compiler thread, else -1. */
    public static long compilerTicks(String stat) {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')'); // the name may hold spaces and parentheses
        if (open < 0 || close < open) {
            return -1;
        }
        String name = stat.substring(open + 1, close);
        if (!name.contains("CompilerThre")) {
            return -1;
        }
        // After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
        String[] f = stat.substring(Math.min(close + 2, stat.length())).split(" ");
        if (f.length < 13) {
            return -1;
        }
        try {
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (NumberFormatException e) {
            return -1; // not the format this reads: a diagnostic must not end the benchmark
        }
    }
}
