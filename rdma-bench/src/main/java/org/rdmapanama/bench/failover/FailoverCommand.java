package org.rdmapanama.bench.failover;

import org.rdmapanama.bench.CliArgs;

import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.Transport;
import org.rdmapanama.failover.FailoverPolicy;
import org.rdmapanama.failover.TransportRoute;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code rdma-bench failover}: a numbered echo stream that follows a transport
 * preference across failures, printing every attempt, failure and reconnect.
 * <pre>
 *   failover -s --listen rocev2=ADDR --listen iwarp=ADDR [-p PORT]
 *   failover [--transport rocev2,iwarp] --peer rocev2=ADDR --peer iwarp=ADDR [-p PORT] [-n MESSAGES]
 *            [--interval MS] [--no-reconnect] [--stall S]
 * </pre>
 * The client's preference is {@code --transport}, else the {@code transport}
 * configuration key ({@code -Drdma.transport}, {@code RDMA_TRANSPORT}, the
 * config file). See {@link FailoverStream} for the stream and what is checked.
 */
public final class FailoverCommand {
    private FailoverCommand() {}

    static final int DEFAULT_PORT = 7471;

    static final class Flags {
        @Option(names = "-s")
        boolean server;
        @Option(names = "--listen")
        List<String> listen = new ArrayList<>();
        @Option(names = "--peer")
        List<String> peer = new ArrayList<>();
        @Option(names = "--transport", converter = CliArgs.NonEmpty.class)
        String transport;
        @Option(names = "-p", converter = CliArgs.Port.class)
        int port = DEFAULT_PORT;
        @Option(names = "-n", converter = Messages.class)
        int messages = 1000;
        @Option(names = "--interval", converter = Millis.class)
        int intervalMillis = 10;
        @Option(names = "--stall", converter = Seconds.class)
        int stallSeconds = 60;
        @Option(names = "--retry-count", converter = RetryCount.class)
        int retryCount = 6;
        @Option(names = "--no-reconnect")
        boolean noReconnect;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    static final class Messages extends CliArgs.Range {
        Messages() {
            super(1, 100_000_000);
        }
    }

    static final class Millis extends CliArgs.Range {
        Millis() {
            super(0, 60_000);
        }
    }

    static final class RetryCount extends CliArgs.Range {
        RetryCount() {
            super(0, 7);
        }
    }

    static final class Seconds extends CliArgs.Range {
        Seconds() {
            super(1, 3600);
        }
    }

    /** What the command line asks for, checked. */
    record Options(boolean server, Map<Transport, InetSocketAddress> listen, List<TransportRoute> routes,
                   int messages, Duration interval, Duration stall, FailoverPolicy policy) {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("failover", args, out, err, FailoverCommand::parse, FailoverCommand::usage,
                o -> o.server() ? FailoverStream.serve(o, out) : FailoverStream.stream(o, out));
    }

    /** Null for -h. */
    static Options parse(String[] args) {
        Flags f = new Flags();
        if (!CliArgs.parse(f, args)) {
            return null;
        }
        Duration interval = Duration.ofMillis(f.intervalMillis);
        Duration stall = Duration.ofSeconds(f.stallSeconds);
        if (f.server) {
            if (!f.peer.isEmpty() || f.transport != null) {
                throw new IllegalArgumentException("-s takes --listen, not --peer or --transport");
            }
            if (f.listen.isEmpty()) {
                throw new IllegalArgumentException("-s needs --listen TRANSPORT=ADDR, one for each transport");
            }
            return new Options(true, addresses("--listen", f.listen, f.port), List.of(), 0, interval, stall, null);
        }
        if (!f.listen.isEmpty()) {
            throw new IllegalArgumentException("--listen is for the server (-s); the client takes --peer");
        }
        if (f.peer.isEmpty()) {
            throw new IllegalArgumentException("the client needs --peer TRANSPORT=ADDR, one for each transport");
        }
        RdmaConfig config = f.transport != null ? RdmaConfig.any().withTransport(f.transport) : RdmaConfig.load();
        List<TransportRoute> routes = TransportRoute.preferred(config, addresses("--peer", f.peer, f.port));
        // 6 retries by default: rxe reads 7 as "forever", and a dead link would then fail nothing but the stall timer.
        FailoverPolicy policy = FailoverPolicy.defaults()
                .withOptions(ConnectionOptions.defaults().withDepth(4, 4).withRetry(f.retryCount))
                .withReconnect(!f.noReconnect);
        return new Options(false, Map.of(), routes, f.messages, interval, stall, policy);
    }

    /** {@code rocev2=10.78.0.2} pairs, one per transport, in the order given. */
    static Map<Transport, InetSocketAddress> addresses(String flag, List<String> values, int port) {
        Map<Transport, InetSocketAddress> map = new LinkedHashMap<>();
        for (String v : values) {
            int eq = v.indexOf('=');
            if (eq <= 0 || eq == v.length() - 1) {
                throw new IllegalArgumentException(flag + " needs TRANSPORT=ADDR (e.g. rocev2=10.78.0.2), got '" + v + "'");
            }
            Transport t = Transport.parse(v.substring(0, eq));
            InetAddress a;
            try {
                a = InetAddress.getByName(v.substring(eq + 1));
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(flag + " " + v + ": unknown host " + v.substring(eq + 1));
            }
            if (map.put(t, new InetSocketAddress(a, port)) != null) {
                throw new IllegalArgumentException(flag + " gives " + t.displayName() + " twice");
            }
        }
        return map;
    }

    private static void usage(PrintStream s) {
        s.println("usage: rdma-bench failover -s --listen TRANSPORT=ADDR... [-p PORT]");
        s.println("       rdma-bench failover [--transport T1,T2] --peer TRANSPORT=ADDR... [-p PORT] [-n MESSAGES]");
        s.println("                           [--interval MS] [--stall S] [--retry-count N] [--no-reconnect]");
        s.println("  a numbered echo stream (-n messages, one every --interval ms, default 1000 and 10) over the");
        s.println("  first transport of the preference (--transport, else rdma.transport / RDMA_TRANSPORT) that");
        s.println("  connects; when its QP fails (or no completion for --stall s, default 60), reconnects on the");
        s.println("  next one and resumes where the server says it left off (--no-reconnect: only reports it).");
        s.println("  --retry-count: transport retries before IBV_WC_RETRY_EXC_ERR, default 6 (rxe retries 7 forever)");
        s.println("  TRANSPORT: rocev2, iwarp, rocev1, ib; port default " + DEFAULT_PORT);
    }
}
