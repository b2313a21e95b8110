package org.rdmapanama.nettybench;

import java.util.List;
import java.util.Locale;

/**
 * One measured case of one series: the client's CSV row (and the report's input, after the runner put the
 * device, its transport and the round in front). CPU per message is the client's and the server's process
 * CPU time over the measured run, divided by the replies.
 */
public record Result(String series, int bytes, int connections, int window, long messages, double seconds,
                     double p50Us, double p99Us, double msgsPerSec, double cpuUsPerMsg) {

    public static final List<String> COLUMNS = List.of("series", "bytes", "connections", "window", "messages",
            "seconds", "p50_us", "p99_us", "msgs_per_s", "cpu_us_per_msg");

    /** A case's message size, connections and requests outstanding on each. */
    public record Case(int bytes, int connections, int window) {
        public String label() {
            return bytes + " B c" + connections + " w" + window;
        }
    }

    /** From a run's raw figures: ns, and the two processes' CPU ns over it. */
    public static Result of(String series, Case c, long messages, long nanos, long p50Nanos, long p99Nanos,
                            long cpuNanos) {
        double s = nanos / 1e9;
        double rate = s > 0 ? messages / s : 0;
        double cpu = messages > 0 ? cpuNanos / 1e3 / messages : 0;
        return new Result(series, c.bytes(), c.connections(), c.window(), messages, s, p50Nanos / 1e3,
                p99Nanos / 1e3, rate, cpu);
    }

    public Case kase() {
        return new Case(bytes, connections, window);
    }

    public String csv() {
        return String.format(Locale.ROOT, "%s,%d,%d,%d,%d,%.4f,%.2f,%.2f,%.1f,%.3f", series, bytes, connections, window,
                messages, seconds, p50Us, p99Us, msgsPerSec, cpuUsPerMsg);
    }

    /** The client's table: a header, then {@link #row()} per case. */
    public static String header() {
        return String.format(Locale.ROOT, "%-18s %7s %4s %4s %10s %10s %10s %12s %12s", "series", "bytes", "conn",
                "win", "messages", "p50[us]", "p99[us]", "msgs/s", "cpu[us/msg]");
    }

    public String row() {
        return String.format(Locale.ROOT, "%-18s %7d %4d %4d %10d %10.1f %10.1f %12.0f %12.2f", series, bytes,
                connections, window, messages, p50Us, p99Us, msgsPerSec, cpuUsPerMsg);
    }
}
