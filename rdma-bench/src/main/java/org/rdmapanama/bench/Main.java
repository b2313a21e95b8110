package org.rdmapanama.bench;

import org.rdmapanama.bench.failover.FailoverCommand;
import org.rdmapanama.bench.perftest.PerftestCommand;
import org.rdmapanama.bench.perftest.PerftestOptions;
import org.rdmapanama.bench.rcpingpong.RcPingpongCommand;
import org.rdmapanama.bench.rping.RpingCommand;
import org.rdmapanama.bench.scale.ScaleCommand;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.module.ModuleReader;
import java.util.Arrays;
import java.util.stream.Stream;

/**
 * {@code rdma-bench SUBCOMMAND [ARGS]}. Exit status: 0 on success, 1 when an
 * RDMA operation fails, 2 for bad usage or when there is no device to use.
 * <p>
 * The unlisted subcommand {@code aot-training} is the training run of the
 * JDK's AOT cache ({@code -XX:AOTCacheOutput}, made by scripts/build): it
 * runs what every start-up runs, with no output, on a machine with or without
 * devices.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
            usage(args.length == 0 ? err : out);
            return args.length == 0 ? CliArgs.USAGE : CliArgs.OK;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        return switch (args[0]) {
            case "devices" -> DevicesCommand.run(rest, out, err);
            case "aot-training" -> aotTraining();
            case "rping" -> RpingCommand.run(rest, out, err);
            case "rc_pingpong" -> RcPingpongCommand.run(rest, out, err);
            case "example" -> ExampleCommand.run(rest, out, err);
            case "echo-server", "echo-client" -> EchoCommand.run(args[0], rest, out, err);
            case "channel_lat", "channel_bw", "channel_rpc" ->
                    org.rdmapanama.bench.channel.ChannelBenchCommand.run(args[0], rest, out, err);
            case "tcp_lat", "tcp_bw", "tcp_rpc" -> org.rdmapanama.bench.tcp.TcpBenchCommand.run(args[0], rest, out, err);
            case "scale" -> ScaleCommand.run(rest, out, err);
            case "channel_scale" -> org.rdmapanama.bench.scale.ChannelScaleCommand.run(rest, out, err);
            case "channel_stream" -> org.rdmapanama.bench.channel.ChannelStreamCommand.run(rest, out, err);
            case "channel_watch" -> org.rdmapanama.bench.channel.ChannelWatchCommand.run(rest, out, err);
            case "failover" -> FailoverCommand.run(rest, out, err);
            case "report" -> org.rdmapanama.bench.report.ReportCommand.run(rest, out, err);
            case "write_lat", "read_lat", "send_lat", "atomic_lat", "write_bw", "read_bw", "send_bw" ->
                    PerftestCommand.run(args[0], rest, out, err);
            default -> {
                err.println("rdma-bench: unknown subcommand '" + args[0] + "'");
                usage(err);
                yield CliArgs.USAGE;
            }
        };
    }

    /**
     * The device list (on a host without RDMA: its error path) and the
     * parsing of a perftest server's and an rping server's options: what
     * runs before a server listens, short of the device. Then it links
     * (without initializing) every class of the runtime, the bindings and
     * the CLI, so that the cache holds them parsed, verified and linked
     * even where this machine has no device to run them on. Always 0.
     */
    private static int aotTraining() {
        PrintStream none = new PrintStream(OutputStream.nullOutputStream());
        DevicesCommand.run(new String[0], none, none);
        PerftestOptions.parse(PerftestOptions.Test.of("write_lat"), new String[] {"-d", "rxe0"});
        RpingCommand.parse(new String[] {"-s", "-a", "127.0.0.1"});
        linkClasses("org.rdmapanama.ffi", ".*");
        linkClasses("org.rdmapanama", ".*");
        // Not bench.jmh (JMH's) nor bench.report (Java2D's): neither starts a server.
        linkClasses("org.rdmapanama.bench",
                "org\\.rdmapanama\\.bench\\.((perftest|rping|rcpingpong|scale|failover)\\.)?[A-Za-z0-9_$]+");
        return CliArgs.OK;
    }

    /** Links the classes of {@code module} whose binary names match the regex {@code classNames}. */
    private static void linkClasses(String module, String classNames) {
        ClassLoader loader = ModuleLayer.boot().findLoader(module);
        try (ModuleReader r = ModuleLayer.boot().configuration().findModule(module).orElseThrow().reference().open();
             Stream<String> entries = r.list()) {
            entries.filter(e -> e.endsWith(".class") && !e.endsWith("module-info.class"))
                    .map(e -> e.substring(0, e.length() - ".class".length()).replace('/', '.'))
                    .filter(c -> c.matches(classNames))
                    .forEach(c -> {
                        try {
                            Class.forName(c, false, loader).getDeclaredMethods(); // HotSpot links the class here
                        } catch (ReflectiveOperationException | LinkageError skipped) {
                            // a class that cannot link here is loaded at run time instead
                        }
                    });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void usage(PrintStream s) {
        s.println("usage: rdma-bench SUBCOMMAND [ARGS]");
        s.println("  devices [-v]   list RDMA devices: transport, ports, GID table (-v: device limits too);");
        s.println("                 --transport|--address|--perftest-flags DEV: one line each, for scripts");
        s.println("  rping          rping-compatible RDMA Read/Write ping over rdma_cm (-h for options)");
        s.println("  example        the README example: Send, RDMA Write, RDMA Read on RDMA_TRANSPORT's device");
        s.println("  echo-server, echo-client HOST");
        s.println("                 the message channel guide's example: an echo service, 4 channels, 16 B to 64 KiB");
        s.println("  channel_lat, channel_bw");
        s.println("                 message channel ping-pong latency and one-way message rate, perftest style (-h)");
        s.println("  channel_rpc    requests and replies over C channels, W outstanding on each: p50, p99, rate (-h)");
        s.println("  tcp_lat, tcp_bw, tcp_rpc");
        s.println("                 the same three over java.nio TCP on the device's interface, for comparison (-h)");
        s.println("  channel_stream a numbered, checksummed one-way stream, checked as it arrives (lost, duplicated,");
        s.println("                 out of order, corrupted), with ib_send_bw's rows (-h)");
        s.println("  channel_watch  one idle channel: how soon a silent peer or link ends it, with keepalive (-h)");
        s.println("  rc_pingpong    ibv_rc_pingpong-compatible Send/Recv ping-pong (IB/RoCE; -h for options)");
        s.println("  channel_scale  many message channels between two processes (server | client ADDR -c N; -h)");
        s.println("  scale          many rdma_cm connections (server|client -a ADDR -c N), connect/close soak (cycles -a ADDR -n N)");
        s.println("  failover       a numbered echo stream over a transport preference (rocev2,iwarp) that reconnects on");
        s.println("                 the next transport when its QP fails (-s --listen T=ADDR... | --peer T=ADDR...; -h)");
        s.println("  report DIR     medians, Java/native, verdicts and plot.png of a bench runner's results (-h for options)");
        s.println("  write_lat, read_lat, send_lat, atomic_lat, write_bw, read_bw, send_bw");
        s.println("                 perftest-compatible tests (ib_write_lat ...): server without an address, -h for options");
    }
}
