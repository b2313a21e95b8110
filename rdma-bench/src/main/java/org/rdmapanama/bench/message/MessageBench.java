package org.rdmapanama.bench.message;

import org.rdmapanama.bench.JitActivity;
import org.rdmapanama.bench.perftest.PerftestRows;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;

/**
 * What the message benchmarks share, over a channel and over TCP: the first word of a message (what the
 * server does with it), the warm-up, and the report's header and columns, so that a runner can put a
 * channel's rows and TCP's side by side. The latency and bandwidth rows are perftest's ({@link PerftestRows});
 * the request/response row is {@link RequestLatencies#row}.
 */
public final class MessageBench {
    private MessageBench() {}

    /** The server replies with a message of the same size. */
    public static final int ECHO = 1;
    /** The server counts it. */
    public static final int SINK = 2;
    /** The server replies with its count of {@link #SINK}s (8 bytes) and starts again from 0. */
    public static final int FIN = 3;

    public static final String RESULT_FMT_RPC =
            " #bytes     #requests      p50[usec]      p99[usec]    MsgRate[Mreq/sec]    BW average[MB/sec]";

    private static final int WARMUP = 2000;
    /**
     * Messages a warm-up sends at least: enough for C2 to take the data path (its tier-4 thresholds are
     * 5,000 to 15,000 calls in profiling code). An idle JIT alone was not enough under emulation, where
     * compiles come seconds apart (docs/results/2026-12-07-channel-latency.md).
     */
    private static final long WARMUP_MIN_MESSAGES = 30_000;

    /** One unreported run of {@code messages} messages of {@code size} bytes (in all, over every connection). */
    @FunctionalInterface
    public interface Round {
        void run(int size, int messages) throws Exception;
    }

    /**
     * {@link #WARMUP_MIN_MESSAGES} of the smallest size (64 MiB at most), then rounds of every size, thrown away, until
     * this JVM's JIT has been idle for {@link JitActivity#QUIET_NANOS} (at least 3, all within
     * {@code seconds}; none if 0): under the lab's emulation an interpreted loop is many times slower
     * than the compiled one. {@code least} bounds a round from below (a request/response round needs C x W).
     */
    public static void warmUp(Round round, List<Integer> sizes, int least, int seconds, PrintStream err)
            throws Exception {
        if (seconds == 0) {
            err.println("client warm-up: none (--warmup 0)");
            return;
        }
        long maxNanos = seconds * 1_000_000_000L;
        long start = System.nanoTime();
        JitActivity.Watch jit = new JitActivity.Watch(start);
        int rounds = 0;
        long messages = 0;
        int smallest = sizes.stream().mapToInt(Integer::intValue).min().orElseThrow();
        long total = Math.min(WARMUP_MIN_MESSAGES, Math.max(WARMUP, (64L << 20) / smallest)); // 64 MiB at most
        int batch = (int) Math.max(least, Math.min(WARMUP, total));
        while (messages < total && System.nanoTime() - start < maxNanos) {
            round.run(smallest, batch); // the smallest size: the most calls of the data path per second
            messages += batch;
        }
        long now;
        do {
            for (int size : sizes) {
                int n = (int) Math.min(WARMUP, Math.max(50, (16L << 20) / size)); // a few seconds at most per size
                round.run(size, Math.max(least, n));
            }
            rounds++;
            now = System.nanoTime();
        } while ((rounds < 3 || jit.busy(now)) && now - start < maxNanos);
        err.printf("client warm-up: %d messages of %d B, then %d rounds of every size; %.1f s (until the JIT is idle"
                + " for 1 s, at most %d s)%n", messages, smallest, rounds, (now - start) / 1e9,
                seconds);
    }

    /**
     * perftest's header: the title, the device and transport, then {@code fields} (name, value, name,
     * value, ...) and the columns of {@code kind}'s rows.
     */
    public static void header(PrintStream out, MessageBenchOptions.Kind kind, String title, String device,
                              String transport, String... fields) {
        out.println(PerftestRows.RESULT_LINE);
        out.println("                    " + title);
        out.println(field("Device", device));
        out.println(field("Transport", transport));
        for (int i = 0; i + 1 < fields.length; i += 2) {
            out.println(field(fields[i], fields[i + 1]));
        }
        out.println(PerftestRows.RESULT_LINE);
        out.println(switch (kind) {
            case LAT -> PerftestRows.RESULT_FMT_LAT;
            case BW -> PerftestRows.RESULT_FMT_BW;
            case RPC -> RESULT_FMT_RPC;
        });
    }

    /** perftest's banner of a server waiting for its client, with the address and device it listens on. */
    public static void banner(PrintStream out, InetSocketAddress at, String device) {
        out.println(PerftestRows.RESULT_LINE);
        out.println("                    Waiting for client to connect... (" + at + ", " + device + ")");
        out.println(PerftestRows.RESULT_LINE);
    }

    /** The title line of each kind's header; {@code over} names what carries the messages ("Channel", "TCP"). */
    public static String title(String over, MessageBenchOptions.Kind kind) {
        return over + switch (kind) {
            case LAT -> " ping-pong Latency Test";
            case BW -> " message BW Test";
            case RPC -> " request/response Test";
        };
    }

    /** The connections line of a request/response header. */
    public static String connections(MessageBenchOptions o) {
        return o.connections + ", " + o.outstanding + " requests outstanding on each, " + o.iters + " requests each";
    }

    static String field(String name, String value) {
        return String.format(Locale.ROOT, " %-15s: %s", name, value);
    }
}
