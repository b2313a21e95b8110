package org.rdmapanama.nettybench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code rdma-netty-bench client}: every case (size x connections x window) of one side against its server,
 * each warmed up, then measured for a fixed time: latency percentiles, messages/s and the CPU time of both
 * processes per message. Prints a table; {@code --csv} appends the rows.
 */
@Command(name = "client", mixinStandardHelpOptions = true,
        description = "Measures every case of one side against its server; prints a table, --csv appends rows.")
final class ClientCommand implements Callable<Integer> {
    @Mixin
    Endpoint endpoint;

    @Option(names = {"-s", "--sizes"}, split = ",", paramLabel = "BYTES", defaultValue = "64,1024,65536",
            description = "request (and reply) sizes in bytes, 8 to 16 MiB (default 64,1024,65536)")
    List<Integer> sizes;

    @Option(names = {"-c", "--connections"}, split = ",", paramLabel = "N", defaultValue = "1,16",
            description = "connection counts (default 1,16)")
    List<Integer> connections;

    @Option(names = {"-w", "--window"}, split = ",", paramLabel = "W", defaultValue = "1,16",
            description = "requests outstanding per connection (default 1,16)")
    List<Integer> windows;

    /** A warm-up round with the JIT busy for less than this share of it ends the warm-up. */
    static final double JIT_QUIET = 0.05;
    /** A warm-up run's least length: long enough that a round's JIT share means something. */
    static final long WARMUP_RUN_NANOS = 500_000_000L;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "1.0", description = "measured time per case (default 1.0)")
    double seconds;

    @Option(names = "--case-warmup", paramLabel = "S", defaultValue = "0.2",
            description = "unrecorded run before each case (default 0.2)")
    double caseWarmup;

    @Option(names = "--warmup", paramLabel = "S", defaultValue = "3", description = {
            "unrecorded runs at the start, at least this long (default 3) and until both JVMs' JIT is done: every",
            "size on the fewest connections and the smallest window, and the smallest size on the most connections",
            "and the largest window, round after round until one round compiled for under 5 % of its time"})
    double warmup;

    @Option(names = "--warmup-max", paramLabel = "S", defaultValue = "90",
            description = "the warm-up ends after this long even if the JIT still compiles (default 90)")
    double warmupMax;

    @Option(names = "--csv", paramLabel = "FILE", description = "append the rows to FILE (a header first if it is new)")
    Path csv;

    @Option(names = "--rotate", paramLabel = "K", defaultValue = "0",
            description = "the side that goes first in case i is side (i + K) mod sides (a runner's round)")
    int rotate;

    @Option(names = "--keep-server", description = "do not stop the server at the end")
    boolean keepServer;

    @Parameters(arity = "0..1", paramLabel = "SERVER", description = "the server's address (default: this device's)")
    String server;

    List<Result.Case> cases() {
        List<Result.Case> out = new ArrayList<>();
        for (int b : sizes) {
            if (b < Wire.MIN_SIZE || b > Wire.MAX_FRAME) {
                throw new IllegalArgumentException("size " + b + " is outside " + Wire.MIN_SIZE + ".." + Wire.MAX_FRAME);
            }
            for (int c : connections) {
                if (c < 1 || c > 256) {
                    throw new IllegalArgumentException("connections " + c + " is outside 1..256");
                }
                for (int w : windows) {
                    if (w < 1 || w > Load.MAX_OUTSTANDING) {
                        throw new IllegalArgumentException("window " + w + " is outside 1.." + Load.MAX_OUTSTANDING);
                    }
                    out.add(new Result.Case(b, c, w));
                }
            }
        }
        return out;
    }

    @Override
    public Integer call() throws Exception {
        List<Result.Case> cases = cases();
        PrintStream out = System.out;
        PrintStream err = System.err;
        int most = cases.stream().mapToInt(Result.Case::connections).max().orElseThrow();
        List<SideRun> sides = new ArrayList<>();
        List<Result> results = new ArrayList<>();
        try {
            for (Side s : endpoint.sides) {
                SideRun r = new SideRun(s, endpoint, server, most);
                sides.add(r);
                r.open(err);
            }
            warmUp(sides, cases, err);
            out.println(Result.header());
            int total = cases.size() * sides.stream().mapToInt(r -> r.side.series().size()).sum(), k = 0;
            long start = System.nanoTime();
            for (int i = 0; i < cases.size(); i++) {
                Result.Case c = cases.get(i);
                for (int j = 0; j < sides.size(); j++) {
                    SideRun r = sides.get((i + j + rotate) % sides.size()); // the order turns case by case
                    for (int mode = 0; mode < r.side.series().size(); mode++) {
                        k++;
                        String series = r.side.series().get(mode);
                        if (r.failed(mode, c)) {
                            out.println(String.format(Locale.ROOT, "%-18s %-20s FAILED (see stderr)", series, c.label()));
                            continue;
                        }
                        try {
                            Result res = measure(r.driver(), mode, c);
                            results.add(res);
                            out.println(res.row());
                        } catch (Exception e) {
                            r.fail(mode, c, e, err);
                            out.println(String.format(Locale.ROOT, "%-18s %-20s FAILED (see stderr)", series, c.label()));
                        }
                        double el = (System.nanoTime() - start) / 1e9;
                        err.printf(Locale.ROOT, "client: [%d/%d] %s %s, elapsed %.0f s, about %.0f s left%n", k, total,
                                series, c.label(), el, el * (total - k) / k);
                    }
                }
            }
            if (!keepServer) {
                sides.forEach(r -> r.stopServer(err));
            }
        } finally {
            sides.forEach(SideRun::close);
            if (csv != null) {
                append(csv, results);
            }
        }
        return sides.stream().anyMatch(SideRun::dead) ? 1 : 0;
    }

    /**
     * The warm-up's cases: every size on the fewest connections with the smallest window, and the smallest size
     * on the most connections with the largest window (under emulation a run of 256 large requests in flight
     * takes seconds; the case's own warm-up runs it before it is measured).
     */
    static List<Result.Case> warmUpCases(List<Result.Case> cases) {
        int c0 = cases.stream().mapToInt(Result.Case::connections).min().orElseThrow();
        int c1 = cases.stream().mapToInt(Result.Case::connections).max().orElseThrow();
        int w0 = cases.stream().mapToInt(Result.Case::window).min().orElseThrow();
        int w1 = cases.stream().mapToInt(Result.Case::window).max().orElseThrow();
        int b0 = cases.stream().mapToInt(Result.Case::bytes).min().orElseThrow();
        java.util.LinkedHashSet<Result.Case> out = new java.util.LinkedHashSet<>();
        cases.forEach(c -> out.add(new Result.Case(c.bytes(), c0, w0)));
        out.add(new Result.Case(b0, c1, w1));
        return List.copyOf(out);
    }

    /**
     * The warm-up's cases of every side unrecorded, round after round, until {@code warmup} seconds passed and
     * a round found the JIT (this JVM's and the server's) compiling for under {@link #JIT_QUIET} of the round,
     * or {@code warmupMax} passed. Under emulation C2 needs minutes for Netty's larger code: measured before
     * that, the sides would be compared by how far their JIT got.
     */
    private void warmUp(List<SideRun> sides, List<Result.Case> all, PrintStream err) {
        List<Result.Case> cases = warmUpCases(all);
        long start = System.nanoTime();
        int runs = cases.size() * sides.stream().mapToInt(r -> r.side.series().size()).sum();
        long per = Math.max(WARMUP_RUN_NANOS, (long) (warmup * 1e9 / Math.max(1, runs)));
        int rounds = 0;
        boolean quiet;
        double elapsed;
        do {
            long r0 = System.nanoTime(), j0 = Wire.jitMillis(), s0 = serverJit(sides);
            for (Result.Case c : cases) {
                for (SideRun r : sides) {
                    for (int mode = 0; mode < r.side.series().size(); mode++) {
                        if (r.failed(mode, c) || r.dead()) continue;
                        try {
                            r.driver().run(mode, c, per, false).get(120, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            r.fail(mode, c, e, err);
                        }
                    }
                }
            }
            rounds++;
            long s1 = serverJit(sides);
            double round = (System.nanoTime() - r0) / 1e9;
            double jit = (Wire.jitMillis() - j0) / 1e3, serverJit = s0 < 0 || s1 < 0 ? 0 : (s1 - s0) / 1e3;
            quiet = Math.max(jit, serverJit) < JIT_QUIET * round;
            elapsed = (System.nanoTime() - start) / 1e9;
            err.printf(Locale.ROOT, "client: warm-up round %d, %.1f s: JIT %.1f s here, %s on the server; %.0f s of"
                    + " at most %.0f%n", rounds, round, jit, s0 < 0 ? "unknown" : String.format(Locale.ROOT, "%.1f s",
                    serverJit), elapsed, Math.max(warmup, warmupMax));
        } while (elapsed < warmup || (!quiet && elapsed < warmupMax));
        err.printf(Locale.ROOT, "client: warm-up %d round(s) of %d cases, %.1f s, the JIT %s%n", rounds, cases.size(),
                elapsed, quiet ? "done" : "still compiling (--warmup-max)");
    }

    /** The server's JIT time from the first side that can ask (they share the server's JVM), or -1. */
    private static long serverJit(List<SideRun> sides) {
        for (SideRun r : sides) {
            if (r.dead()) continue;
            try {
                long t = r.driver().serverJit();
                if (t >= 0) {
                    return t;
                }
            } catch (Exception e) {
                // another side may answer
            }
        }
        return -1;
    }

    private Result measure(Driver d, int mode, Result.Case c) throws Exception {
        if (caseWarmup > 0) {
            d.run(mode, c, (long) (caseWarmup * 1e9), false).get(120, TimeUnit.SECONDS);
        }
        long s0 = d.serverCpu(false);
        long c0 = Wire.processCpuNanos();
        Load l = d.run(mode, c, (long) (seconds * 1e9), true).get(120, TimeUnit.SECONDS);
        long c1 = Wire.processCpuNanos();
        long s1 = d.serverCpu(false);
        return Result.of(d.series().get(mode), c, l.replies(), l.nanos(), l.percentile(50), l.percentile(99),
                (c1 - c0) + (s1 - s0));
    }

    static void append(Path file, List<Result> results) throws java.io.IOException {
        StringBuilder s = new StringBuilder();
        if (!Files.exists(file) || Files.size(file) == 0) {
            s.append(String.join(",", Result.COLUMNS)).append('\n');
        }
        for (Result r : results) {
            s.append(r.csv()).append('\n');
        }
        Files.writeString(file, s, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
