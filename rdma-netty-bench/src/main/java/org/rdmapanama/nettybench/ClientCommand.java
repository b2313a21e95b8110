package org.rdmapanama.nettybench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "1.0", description = "measured time per case (default 1.0)")
    double seconds;

    @Option(names = "--case-warmup", paramLabel = "S", defaultValue = "0.3",
            description = "unrecorded run before each case (default 0.3)")
    double caseWarmup;

    @Option(names = "--warmup", paramLabel = "S", defaultValue = "3",
            description = "unrecorded runs of every case at the start, at least this long (default 3)")
    double warmup;

    @Option(names = "--csv", paramLabel = "FILE", description = "append the rows to FILE (a header first if it is new)")
    Path csv;

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

    @SuppressWarnings("try") // the driver's close() may be interrupted
    @Override
    public Integer call() throws Exception {
        List<Result.Case> cases = cases();
        Side side = endpoint.side;
        InetAddress to = server != null ? InetAddress.getByName(server) : endpoint.address();
        InetSocketAddress at = new InetSocketAddress(to, endpoint.port());
        PrintStream out = System.out;
        PrintStream err = System.err;
        List<Result> results = new ArrayList<>();
        NettyNet net = side == Side.CHANNEL ? null : NettyNet.of(side, endpoint);
        try (Driver d = switch (side) {
            case CHANNEL -> new ChannelEcho.Client(endpoint, at);
            case NETTY_RDMA, NETTY_EPOLL -> new NettyEcho.Client(net, at, side.label);
            case GRPC_RDMA, GRPC_EPOLL -> new GrpcEcho.Client(net, at, side.series());
        }) {
            int most = cases.stream().mapToInt(Result.Case::connections).max().orElseThrow();
            long t0 = System.nanoTime();
            d.connect(most);
            err.printf(Locale.ROOT, "client: %s, %d connections to %s in %.1f s%n", side.label, most, at,
                    (System.nanoTime() - t0) / 1e9);
            warmUp(d, cases, err);
            out.println(Result.header());
            int total = cases.size() * d.series().size(), k = 0;
            long start = System.nanoTime();
            for (Result.Case c : cases) {
                for (int mode = 0; mode < d.series().size(); mode++) {
                    Result r = measure(d, mode, c);
                    results.add(r);
                    out.println(r.row());
                    k++;
                    double el = (System.nanoTime() - start) / 1e9;
                    err.printf(Locale.ROOT, "client: [%d/%d] %s %s, elapsed %.0f s, about %.0f s left%n", k, total,
                            r.series(), c.label(), el, el * (total - k) / k);
                }
            }
            if (!keepServer) {
                d.serverCpu(true);
            }
        } finally {
            if (net != null) {
                net.close();
            }
        }
        if (csv != null) {
            append(csv, results);
        }
        return 0;
    }

    /** Every case unrecorded, round after round, until {@code warmup} seconds passed (at least one round). */
    private void warmUp(Driver d, List<Result.Case> cases, PrintStream err) throws Exception {
        long start = System.nanoTime();
        long per = Math.max(50_000_000L, (long) (warmup * 1e9 / Math.max(1, cases.size() * d.series().size())));
        int rounds = 0;
        do {
            for (Result.Case c : cases) {
                for (int mode = 0; mode < d.series().size(); mode++) {
                    d.run(mode, c, per, false).get(120, TimeUnit.SECONDS);
                }
            }
            rounds++;
        } while (System.nanoTime() - start < warmup * 1e9);
        err.printf(Locale.ROOT, "client: warm-up %d round(s) of every case, %.1f s%n", rounds,
                (System.nanoTime() - start) / 1e9);
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
