package org.rdmapanama.testkit;

import javax.management.JMException;
import javax.management.ObjectName;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The process's native footprint as a leak check can trust it. Not RSS, which
 * follows the Java heap's sizing, and not malloc's total, which the JIT moves
 * by megabytes under emulation: the number of memory mappings (the queue
 * buffers providers mmap) and NMT's "Other" category, where every FFM arena
 * allocation is counted.
 */
public final class NativeHeap {
    private NativeHeap() {}

    private static final Pattern OTHER = Pattern.compile("-\\s+Other \\(reserved=\\d+KB, committed=\\d+KB\\)\\s+\\(malloc=(\\d+)KB");

    public static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    public static long mappings() throws IOException {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.count();
        }
    }

    /** KiB malloc'd under NMT's "Other" tag; needs {@code -XX:NativeMemoryTracking=summary} (scripts/test sets it). */
    public static long arenaKb() {
        String summary;
        try {
            summary = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
        } catch (JMException e) {
            throw new IllegalStateException("the NMT summary is not available", e);
        }
        if (summary.contains("not enabled")) {
            throw new IllegalStateException("run the JVM with -XX:NativeMemoryTracking=summary: " + summary.strip());
        }
        if (!summary.contains("Total: reserved=")) { // a format this parser does not know: a check would pass blind
            throw new IllegalStateException("unexpected NMT summary format: " + summary.lines().limit(8).toList());
        }
        Matcher m = OTHER.matcher(summary);
        return m.find() ? Long.parseLong(m.group(1)) : 0; // NMT omits categories under 1 KiB
    }

    public static long rssKb() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        throw new IOException("no VmRSS in /proc/self/status");
    }
}
