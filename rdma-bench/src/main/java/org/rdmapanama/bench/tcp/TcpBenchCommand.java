package org.rdmapanama.bench.tcp;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.message.MessageBench;
import org.rdmapanama.bench.message.MessageBenchOptions;
import org.rdmapanama.bench.message.MessageBenchOptions.Kind;
import org.rdmapanama.bench.perftest.PerftestRows;
import org.rdmapanama.bench.perftest.PerftestStats;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * {@code rdma-bench tcp_lat}, {@code tcp_bw} and {@code tcp_rpc}: the services of {@code channel_lat},
 * {@code channel_bw} and {@code channel_rpc} over plain java.nio TCP ({@link TcpServer}, {@link TcpClient}) on
 * the interface of the RDMA device that {@code -d} or {@code --transport} selects, with the same command line,
 * warm-up, header and rows, so that a runner can set the two side by side.
 */
public final class TcpBenchCommand {
    private TcpBenchCommand() {}

    public static int run(String name, String[] args, PrintStream out, PrintStream err) {
        Kind kind = MessageBenchOptions.kindOf(name);
        return CliArgs.run(name, args, out, err, a -> MessageBenchOptions.parse(kind, true, a),
                s -> s.println(MessageBenchOptions.usage(name)), o -> {
                    Selection sel = Selection.select(o.config(), RdmaDevices.list());
                    return o.server == null ? serve(o, sel, out) : client(o, sel, out, err);
                });
    }

    private static int serve(MessageBenchOptions o, Selection sel, PrintStream out) throws Exception {
        try (TcpServer server = new TcpServer(new InetSocketAddress(sel.ipAddress(), o.port))) {
            MessageBench.banner(out, server.address(), sel.device().name());
            server.serve();
        }
        return CliArgs.OK;
    }

    private static int client(MessageBenchOptions o, Selection sel, PrintStream out, PrintStream err) throws Exception {
        InetAddress local = sel.ipAddress();
        int connections = o.kind == Kind.RPC ? o.connections : 1;
        int outstanding = o.kind == Kind.RPC ? o.outstanding : 1;
        try (TcpClient client = new TcpClient(new InetSocketAddress(o.server, o.port), new InetSocketAddress(local, 0),
                connections, outstanding)) {
            header(o, sel, local, out);
            switch (o.kind) {
                case LAT -> {
                    MessageBench.warmUp(client::pingPong, o.sizes(), 1, o.warmupSeconds, err);
                    for (int size : o.sizes()) {
                        out.println(PerftestRows.row(PerftestStats.latency(size, client.pingPong(size, o.iters), o.iters, 2)));
                    }
                }
                case BW -> {
                    MessageBench.warmUp(client::stream, o.sizes(), 1, o.warmupSeconds, err);
                    for (int size : o.sizes()) {
                        long[] t = client.stream(size, o.iters);
                        out.println(PerftestRows.row(PerftestStats.bandwidth(size, o.iters, null, null, 1, t[0], t[1], false)));
                    }
                }
                case RPC -> {
                    MessageBench.warmUp((size, n) -> client.requests(size, Math.max(o.outstanding, n / o.connections)),
                            o.sizes(), o.connections * o.outstanding, o.warmupSeconds, err);
                    for (int size : o.sizes()) {
                        long nanos = client.requests(size, o.iters);
                        out.println(client.latencies().row(size, nanos));
                    }
                }
            }
            out.println(PerftestRows.RESULT_LINE);
        }
        return CliArgs.OK;
    }

    private static void header(MessageBenchOptions o, Selection sel, InetAddress local, PrintStream out) {
        String transport = "TCP over java.nio, on the interface of " + sel.device().name() + " ("
                + sel.transport().displayName() + ", " + local.getHostAddress() + ")";
        String buffers = TcpConnection.BUFFER / 1024 + " KiB direct per connection and direction, TCP_NODELAY,"
                + " one selector thread a side";
        String title = MessageBench.title("TCP", o.kind);
        String device = sel.device().name();
        if (o.kind == Kind.RPC) {
            MessageBench.header(out, o.kind, title, device, transport, "Connections", MessageBench.connections(o),
                    "Buffers", buffers);
        } else {
            MessageBench.header(out, o.kind, title, device, transport, "Buffers", buffers);
        }
    }
}
