package org.rdmapanama.bench.jmh;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who allocated during each iteration: the heap bytes of every thread alive when it was made,
 * per message, and the rest of the JVM's total ({@code getTotalThreadAllocatedBytes}, the figure
 * JMH's {@code -prof gc} divides by the operations). {@link #begin} and {@link #end} run inside the
 * profiler's window and allocate nothing; {@link #print} runs after the last iteration.
 */
final class ThreadBytes {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int MAX_ITERATIONS = 256;

    private final long[] ids;
    private final String[] names;
    private final long[] before;
    private final long[][] bytes; // [iteration][thread], the last column the rest of the JVM
    private final long[] messages;
    private long totalBefore;
    private long messagesBefore;
    private int iterations;

    /** Tracks every live thread; those whose names start with one of {@code prefixes} come first. */
    ThreadBytes(String... prefixes) {
        List<Thread> threads = new ArrayList<>(Thread.getAllStackTraces().keySet());
        threads.sort((a, b) -> Integer.compare(rank(a, prefixes), rank(b, prefixes)));
        ids = threads.stream().mapToLong(Thread::threadId).toArray();
        names = threads.stream().map(Thread::getName).toArray(String[]::new);
        before = new long[ids.length];
        bytes = new long[MAX_ITERATIONS][ids.length + 1];
        messages = new long[MAX_ITERATIONS];
    }

    private static int rank(Thread t, String[] prefixes) {
        if (t == Thread.currentThread()) {
            return 0;
        }
        for (String p : prefixes) {
            if (t.getName().startsWith(p)) {
                return 1;
            }
        }
        return 2;
    }

    void begin(long messageCount) {
        messagesBefore = messageCount;
        totalBefore = THREADS.getTotalThreadAllocatedBytes();
        for (int i = 0; i < ids.length; i++) {
            before[i] = THREADS.getThreadAllocatedBytes(ids[i]);
        }
    }

    void end(long messageCount) {
        if (iterations == MAX_ITERATIONS) {
            return;
        }
        long[] row = bytes[iterations];
        long known = 0;
        for (int i = 0; i < ids.length; i++) {
            long now = THREADS.getThreadAllocatedBytes(ids[i]);
            row[i] = now < 0 || before[i] < 0 ? 0 : now - before[i]; // -1: the thread ended
            known += row[i];
        }
        row[ids.length] = THREADS.getTotalThreadAllocatedBytes() - totalBefore - known;
        messages[iterations++] = messageCount - messagesBefore;
    }

    /** One line per iteration: its messages, then bytes per message of each thread that allocated in some iteration. */
    void print(PrintStream out) {
        out.println();
        List<Integer> columns = new ArrayList<>();
        for (int c = 0; c <= ids.length; c++) {
            for (int it = 0; it < iterations; it++) {
                if (bytes[it][c] != 0) {
                    columns.add(c);
                    break;
                }
            }
        }
        List<String> idle = new ArrayList<>();
        for (int c = 0; c < ids.length; c++) {
            if (!columns.contains(c)) {
                idle.add(names[c]);
            }
        }
        out.println("ThreadBytes: bytes allocated per message in each iteration (warm-up included), by thread; "
                + "nothing in any iteration: " + (idle.isEmpty() ? "none" : String.join(", ", idle))
                + "; 'rest' is every other thread, including those started later");
        for (int it = 0; it < iterations; it++) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "ThreadBytes: iteration %d, %d messages:",
                    it + 1, messages[it]));
            if (columns.isEmpty()) {
                line.append(" nothing allocated");
            }
            for (int c : columns) {
                line.append(String.format(Locale.ROOT, " %s %.3f (%d B);", c == ids.length ? "rest" : names[c],
                        (double) bytes[it][c] / Math.max(1, messages[it]), bytes[it][c]));
            }
            out.println(line);
        }
    }
}
