package org.rdmapanama.bench;

import java.io.PrintStream;
import java.util.Arrays;

/**
 * {@code rdma-bench SUBCOMMAND [ARGS]}. Exit status: 0 on success, 1 when an
 * RDMA operation fails, 2 for bad usage or when there is no device to use.
 */
public final class Main {
    private Main() {}

    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
            usage(args.length == 0 ? err : out);
            return args.length == 0 ? USAGE : OK;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        return switch (args[0]) {
            case "devices" -> DevicesCommand.run(rest, out, err);
            case "rping" -> RpingCommand.run(rest, out, err);
            case "rc_pingpong" -> RcPingpongCommand.run(rest, out, err);
            case "example" -> ExampleCommand.run(rest, out, err);
            case "scale" -> ScaleCommand.run(rest, out, err);
            case "report" -> org.rdmapanama.bench.report.ReportCommand.run(rest, out, err);
            case "write_lat", "read_lat", "send_lat", "atomic_lat", "write_bw", "read_bw", "send_bw" ->
                    PerftestCommand.run(args[0], rest, out, err);
            default -> {
                err.println("rdma-bench: unknown subcommand '" + args[0] + "'");
                usage(err);
                yield USAGE;
            }
        };
    }

    private static void usage(PrintStream s) {
        s.println("usage: rdma-bench SUBCOMMAND [ARGS]");
        s.println("  devices [-v]   list RDMA devices: transport, ports, GID table (-v: device limits too)");
        s.println("  rping          rping-compatible RDMA Read/Write ping over rdma_cm (-h for options)");
        s.println("  example        the README example: Send, RDMA Write, RDMA Read on RDMA_TRANSPORT's device");
        s.println("  rc_pingpong    ibv_rc_pingpong-compatible Send/Recv ping-pong (IB/RoCE; -h for options)");
        s.println("  scale          many rdma_cm connections (server|client -a ADDR -c N), connect/close soak (cycles -a ADDR -n N)");
        s.println("  report DIR     medians, Java/native, verdicts and plot.png of a bench runner's results (-h for options)");
        s.println("  write_lat, read_lat, send_lat, atomic_lat, write_bw, read_bw, send_bw");
        s.println("                 perftest-compatible tests (ib_write_lat ...): server without an address, -h for options");
    }
}
