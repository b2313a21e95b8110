package org.rdmapanama.bench.rping;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.Getopt;

import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.CmException;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.error.RdmaException;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;

/**
 * {@code rdma-bench rping}: protocol-compatible with rdmacm-utils' {@code rping},
 * so either side may be the native tool. The client advertises a source buffer,
 * the server RDMA-Reads it, says "go ahead", the client advertises a sink, the
 * server RDMA-Writes its copy there and says "done"; {@code -C} times, then the
 * client disconnects. See {@link RpingPeer} for the wire format and the loops.
 * <p>
 * The flags are rping's ({@code -s -c -a -I -p -C -S -v -V -d -P}). Two
 * differences: {@code -P} serves clients one after another rather than on a
 * thread each, and {@code -q} (a QP created outside rdma_cm) is refused, since
 * {@link RdmaConnection} always creates its QP through rdma_cm.
 */
public final class RpingCommand {
    private RpingCommand() {}

    static final int DEFAULT_PORT = 7174;
    private static final int ECONNREFUSED = 111;
    /**
     * rping's RPING_MIN_BUFSIZE as the rdma-core 44 binary computes it: {@code sizeof "INT_MAX"}
     * (INT_MAX is not defined where it is stringified) + {@code sizeof "rdma-ping-%d: "}.
     */
    static final int MIN_SIZE = 23;
    /** rping accepts up to RPING_BUFSIZE - 1 (its message says 65536, but 65536 is refused). */
    static final int MAX_SIZE = 64 * 1024 - 1;

    /** rping's QP: 16 send WRs, 2 receive WRs, one SGE each; one RDMA Read in flight each way. */
    static final ConnectionOptions CONNECTION = ConnectionOptions.defaults().withDepth(16, 2);
    /**
     * rping gives rdma_resolve_addr and rdma_resolve_route 2 s each. A cold JVM
     * spends seconds linking its first rdma_cm calls under the lab's qemu TCG,
     * inside this budget, so it is wider. A refused connect fails at once anyway.
     */
    static final Duration RESOLVE_TIMEOUT = Duration.ofSeconds(30);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /**
     * What the command line asked for.
     *
     * @param server     {@code -s} (true) or {@code -c}
     * @param address    {@code -a}: the server's address; the server's default is the wildcard
     * @param source     {@code -I}: the client's source address, or null
     * @param count      {@code -C}: pings; 0 means until interrupted
     */
    public record Options(boolean server, InetAddress address, InetAddress source, int port, int count, int size,
                   boolean verbose, boolean validate, boolean debug, boolean persistent) {
        InetSocketAddress socketAddress() {
            return new InetSocketAddress(address, port);
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("rping", args, out, err, RpingCommand::parse, RpingCommand::usage, o -> {
            try {
                return o.server() ? serve(o, out, err) : ping(o, out);
            } catch (RdmaException | RuntimeException e) {
                // RuntimeException: a refusal by rdma-panama (a device limit, a transport that lacks something).
                err.println("rdma-bench rping: " + e.getMessage());
                if (o.debug()) {
                    e.printStackTrace(err);
                }
                return CliArgs.exitStatus(e);
            }
        });
    }

    /** The client: {@code -C} pings, then disconnect. */
    private static int ping(Options o, PrintStream out) throws RdmaException, InterruptedException {
        InetSocketAddress local = o.source() == null ? null : new InetSocketAddress(o.source(), 0);
        long t0 = System.nanoTime();
        RdmaConnection conn = RdmaConnection.resolve(o.socketAddress(), local, CONNECTION, RESOLVE_TIMEOUT);
        try (RpingPeer peer = RpingPeer.client(conn, o, out)) {
            peer.debug("address and route to %s resolved in %d ms", o.socketAddress(), millisSince(t0));
            long t1 = System.nanoTime();
            try {
                conn.connect(new byte[0], CONNECT_TIMEOUT);
            } catch (CmException e) {
                // RoCE/IB: a REJECTED event (reason 8, invalid service ID, when no one listens); iWARP: ECONNREFUSED.
                boolean refused = e.event() == CmEventType.REJECTED || e.errno() == ECONNREFUSED;
                throw refused ? new RdmaException(e.getMessage() + "; is an rping server listening there?", e) : e;
            }
            peer.debug("connected on %s in %d ms", conn.context().device().name(), millisSince(t1));
            long t2 = System.nanoTime();
            peer.runClient();
            peer.debug("%d pings of %d bytes in %d ms", o.count(), o.size(), millisSince(t2));
            conn.disconnect();
        }
        return CliArgs.OK;
    }

    private static long millisSince(long t) {
        return (System.nanoTime() - t) / 1_000_000;
    }

    /** The server: one client (or, with {@code -P}, one client after another), until it disconnects. */
    private static int serve(Options o, PrintStream out, PrintStream err) throws RdmaException, InterruptedException {
        try (RdmaListener listener = RdmaListener.bind(o.socketAddress(), 3, CONNECTION)) {
            if (o.debug()) {
                out.printf("listening on %s%n", o.socketAddress());
            }
            while (true) {
                RdmaConnection conn = null;
                while (conn == null) {
                    conn = listener.accept(Duration.ofSeconds(1));
                }
                try (RpingPeer peer = RpingPeer.server(conn, o, out)) {
                    conn.accept(new byte[0], CONNECT_TIMEOUT);
                    peer.debug("accepted a client on %s", conn.context().device().name());
                    peer.runServer();
                } catch (RdmaException e) {
                    if (!o.persistent()) {
                        throw e;
                    }
                    err.println("rdma-bench rping: " + e.getMessage()); // one client failed; serve the next
                }
                if (!o.persistent()) {
                    return CliArgs.OK;
                }
            }
        }
    }

    // --- the command line, rping's getopt string "a:I:Pp:C:S:scvVdq" (grouped -vV, attached -C5) ---

    /** The flags as given; {@link #parse} checks them and resolves the addresses. */
    private static final class Flags {
        boolean server;
        boolean client;
        String address;
        String source;
        int port = DEFAULT_PORT;
        int count = 0;
        int size = 64;
        boolean verbose;
        boolean validate;
        boolean debug;
        boolean persistent;
        boolean selfCreatedQp;
        boolean help;
    }

    /** The options, or null for {@code -h}; throws IllegalArgumentException with a one-line reason. */
    public static Options parse(String[] args) {
        Flags f = new Flags();
        List<String> operands = new Getopt()
                .flag(() -> f.server = true, "-s")
                .flag(() -> f.client = true, "-c")
                .value((typed, v) -> f.address = v, "-a")
                .value((typed, v) -> f.source = v, "-I")
                .value((typed, v) -> f.port = number(typed, v, CliArgs.PORT_MIN, CliArgs.PORT_MAX, "port"), "-p")
                .value((typed, v) -> f.count = number(typed, v, 0, Integer.MAX_VALUE, "count"), "-C")
                .value((typed, v) -> f.size = number(typed, v, MIN_SIZE, MAX_SIZE, "size"), "-S")
                .flag(() -> f.verbose = true, "-v")
                .flag(() -> f.validate = true, "-V")
                .flag(() -> f.debug = true, "-d")
                .flag(() -> f.persistent = true, "-P")
                .flag(() -> f.selfCreatedQp = true, "-q")
                .flag(() -> f.help = true, "-h", "--help")
                .parse(args);
        if (f.help) {
            return null;
        }
        if (!operands.isEmpty()) {
            throw new IllegalArgumentException("unexpected argument '" + operands.getFirst() + "'");
        }
        if (f.selfCreatedQp) {
            throw new IllegalArgumentException(
                    "-q (a self-created, self-modified QP) is not supported: rdma-panama creates the QP through rdma_cm");
        }
        if (f.server && f.client) {
            throw new IllegalArgumentException("-s and -c exclude each other");
        }
        if (!f.server && !f.client) {
            throw new IllegalArgumentException("choose -s (server) or -c (client)");
        }
        if (f.client && f.address == null) {
            throw new IllegalArgumentException("the client needs the server's address (-a ADDR)");
        }
        if (f.server && f.source != null) {
            throw new IllegalArgumentException("-I (source address) is for the client");
        }
        if (f.client && f.persistent) {
            throw new IllegalArgumentException("-P (persistent) is for the server");
        }
        InetAddress addr = f.address == null ? wildcard() : resolve("-a", f.address);
        InetAddress src = f.source == null ? null : resolve("-I", f.source);
        return new Options(f.server, addr, src, f.port, f.count, f.size, f.verbose, f.validate, f.debug, f.persistent);
    }

    /** rping's numbers: decimal, with its messages ("invalid size 22 for -S (valid range is 23 to 65535)"). */
    private static int number(String flag, String v, int min, int max, String what) {
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + what + " '" + v + "' for " + flag + ": not a number");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("invalid " + what + " " + n + " for " + flag
                    + " (valid range is " + min + " to " + max + ")");
        }
        return (int) n;
    }

    private static InetAddress resolve(String flag, String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("invalid address '" + host + "' for " + flag
                    + ": not an IP address or a known host name");
        }
    }

    private static InetAddress wildcard() {
        try {
            return InetAddress.getByAddress(new byte[4]);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    static void usage(PrintStream s) {
        s.println("usage: rdma-bench rping -s [-vVdP] [-S size] [-C count] [-a addr] [-p port]");
        s.println("       rdma-bench rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]");
        s.println("  -s        server: serves one client and exits when it disconnects");
        s.println("  -c        client");
        s.println("  -a addr   address (server: to listen on, default any; its IP picks the device)");
        s.println("  -I addr   client: source address to bind to");
        s.println("  -p port   port (default " + DEFAULT_PORT + ")");
        s.println("  -C count  pings (default 0: until interrupted)");
        s.println("  -S size   ping data size, " + MIN_SIZE + " to " + MAX_SIZE + " (default 64)");
        s.println("  -v        display ping data");
        s.println("  -V        client: validate ping data (a mismatch fails the run)");
        s.println("  -d        debug output");
        s.println("  -P        server: serve clients one after another until killed");
    }
}
