package org.rdmapanama.bench.message;

import org.rdmapanama.bench.Getopt;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of the message benchmarks, over a channel ({@code channel_lat}, {@code channel_bw},
 * {@code channel_rpc}) or over java.nio TCP ({@code tcp_lat}, {@code tcp_bw}, {@code tcp_rpc}), in
 * perftest's manner: {@code -d DEV} or {@code --transport T} (for TCP: whose interface), {@code -p PORT},
 * {@code -s SIZE} (or a comma list of sizes) or {@code -a} (8 B to 4 MiB), {@code -n ITERS}; the
 * request/response tests add {@code -c CONNECTIONS} and {@code -w OUTSTANDING} (requests in flight per
 * connection), and {@code --warmup SECONDS}; the channel adds its {@code -w WINDOW} (lat, bw; {@code --window} for rpc), {@code --slot BYTES}
 * and {@code -e}. The server's address as the operand makes a client.
 */
public final class MessageBenchOptions {
    /** What is measured: ping-pong latency, one-way rate, or requests with replies. */
    public enum Kind { LAT, BW, RPC }

    public static final int CHANNEL_PORT = 18530;
    /** Not the channel's: on siw an rdma_cm listener holds the kernel TCP port of the same number. */
    public static final int TCP_PORT = 18532;
    public static final int MAX_ALL = 4 << 20;
    /** A request/response test holds up to C x W messages of the size at each end. */
    public static final int MAX_RPC_SIZE = 4 << 20;
    static final List<Integer> RPC_SIZES = List.of(64, 4096, 65536, 1048576);
    static final int MAX_CONNECTIONS = 1024;
    static final int MAX_OUTSTANDING = 4096;

    public final Kind kind;
    /** Over java.nio TCP rather than a channel: no channel options. */
    public final boolean tcp;
    String device;
    String transport;
    public int port;
    private final List<Integer> sizeList = new ArrayList<>();
    boolean all;
    public int iters = -1;
    /** The channel's window; -1 until parsed. */
    public int window = -1;
    public int slot = ChannelOptions.defaults().slotSize();
    int inline = ChannelOptions.defaults().inlineSize();
    int cq = ChannelOptions.defaults().cqSize();
    /** Requests in flight per connection (rpc). */
    public int outstanding = 8;
    /** Connections (rpc). */
    public int connections = 4;
    /** The warm-up's limit; 0: none. */
    public int warmupSeconds = 90;
    /** perftest polls its CQ without pause unless -e; so does this, through the loop's busy-poll budget. */
    boolean events;
    public String server;

    private MessageBenchOptions(Kind kind, boolean tcp) {
        this.kind = kind;
        this.tcp = tcp;
        this.port = tcp ? TCP_PORT : CHANNEL_PORT;
    }

    /** The kind a subcommand's name ends in: {@code _lat}, {@code _bw} or {@code _rpc}. */
    public static Kind kindOf(String name) {
        return name.endsWith("_lat") ? Kind.LAT : name.endsWith("_bw") ? Kind.BW : Kind.RPC;
    }

    /** Null for -h. */
    public static MessageBenchOptions parse(Kind kind, boolean tcp, String[] args) {
        MessageBenchOptions o = new MessageBenchOptions(kind, tcp);
        boolean rpc = kind == Kind.RPC;
        int maxSize = rpc ? MAX_RPC_SIZE : 1 << 30;
        boolean[] help = {false};
        Getopt g = new Getopt()
                .endpoint(() -> help[0] = true, v -> o.device = v, v -> o.transport = v, v -> o.port = v)
                .value((typed, v) -> {
                    for (String one : v.split(",", -1)) {
                        o.sizeList.add(Getopt.number(typed, one, 8, maxSize));
                    }
                }, "-s", "--size")
                .flag(() -> o.all = true, "-a", "--all")
                .value(Getopt.number(5, 100_000_000, v -> o.iters = v), "-n", "--iters")
                .value(Getopt.number(0, 3600, v -> o.warmupSeconds = v), "--warmup");
        if (rpc) {
            g.value(Getopt.number(1, MAX_CONNECTIONS, v -> o.connections = v), "-c", "--connections")
                    .value(Getopt.number(1, MAX_OUTSTANDING, v -> o.outstanding = v), "-w", "--outstanding");
        }
        if (!tcp) {
            g.value(Getopt.number(3, 4096, v -> o.window = v), rpc ? new String[] {"--window"} : new String[] {"-w", "--window"})
                    .value(Getopt.number(64, 1 << 24, v -> o.slot = v), "--slot")
                    .value(Getopt.number(0, 4096, v -> o.inline = v), "--inline")
                    .value(Getopt.number(16, 1 << 22, v -> o.cq = v), "--cq")
                    .flag(() -> o.events = true, "-e", "--events");
        }
        List<String> operands = g.parse(args);
        if (help[0]) {
            return null;
        }
        o.server = Getopt.serverOperand(operands);
        if (o.all && !o.sizeList.isEmpty()) {
            throw new IllegalArgumentException("-a and -s exclude each other");
        }
        if (Integer.bitCount(o.slot) != 1) {
            throw new IllegalArgumentException("--slot must be a power of two, got " + o.slot);
        }
        if (o.iters < 0) {
            o.iters = kind == Kind.BW ? 5000 : 1000;
        }
        if (rpc && o.iters < o.outstanding) {
            throw new IllegalArgumentException("-n (" + o.iters + " requests per connection) must be at least -w ("
                    + o.outstanding + " outstanding)");
        }
        if (o.window < 0) {
            // A window below W would hold requests back in the sender's queue: W are meant to be in flight.
            o.window = Math.max(ChannelOptions.defaults().window(), rpc ? o.outstanding : 0);
        }
        return o;
    }

    public List<Integer> sizes() {
        List<Integer> s = new ArrayList<>();
        if (all) {
            for (int b = 8; b <= MAX_ALL; b *= 2) {
                s.add(b);
            }
        } else if (!sizeList.isEmpty()) {
            s.addAll(sizeList);
        } else if (kind == Kind.RPC) {
            s.addAll(RPC_SIZES);
        } else {
            s.add(kind == Kind.BW ? 65536 : 64);
        }
        return s;
    }

    public int largest() {
        return sizes().stream().mapToInt(Integer::intValue).max().orElseThrow();
    }

    public int smallest() {
        return sizes().stream().mapToInt(Integer::intValue).min().orElseThrow();
    }

    public RdmaConfig config() {
        return config(transport, device);
    }

    /** The configuration (RDMA_* and rdma.*) with -d and --transport on top. */
    public static RdmaConfig config(String transport, String device) {
        RdmaConfig c = RdmaConfig.load();
        if (transport != null) {
            c = c.withTransport(transport);
        }
        if (device != null) {
            c = c.withDevice(device);
        }
        return c;
    }

    public ChannelOptions channelOptions() {
        ChannelOptions d = ChannelOptions.defaults();
        return d.withWindow(window).withSlotSize(slot).withMaxMessageSize(Math.max(largest(), d.maxMessageSize()))
                .withSendQueueLimit(Math.max(d.sendQueueLimit(), 2 * outstanding))
                .withBusyPollNanos(events ? d.busyPollNanos() : Long.MAX_VALUE)
                .withInlineSize(inline).withCqSize(cq);
    }

    public static String usage(String name) {
        Kind kind = kindOf(name);
        boolean tcp = name.startsWith("tcp_");
        String what = switch (kind) {
            case LAT -> "";
            case BW -> "";
            case RPC -> " [-c CONNECTIONS] [-w OUTSTANDING]";
        };
        String channel = tcp ? "" : (kind == Kind.RPC ? " [--window WINDOW]" : " [-w WINDOW]") + " [--slot BYTES] [--inline BYTES] [--cq ENTRIES] [-e]";
        StringBuilder s = new StringBuilder("usage: rdma-bench " + name + " [-d DEV | --transport T] [-p PORT]"
                + " [-s SIZE[,SIZE...] | -a] [-n ITERS]" + what + channel + " [--warmup S] [SERVER]\n"
                + "  --warmup: the client's warm-up, until its JIT is idle, lasts S seconds at most (default 90, 0: none)\n");
        if (kind == Kind.RPC) {
            s.append("  -c: connections (default 4); -w: requests outstanding on each (default 8); -n: requests per\n"
                    + "      connection (default 1000); sizes 8 B to 4 MiB (default 64,4096,65536,1048576); the server\n"
                    + "      echoes a reply of the request's size\n");
            if (!tcp) {
                s.append("  --window: the channel's window (default the larger of 32 and -w); give the server the same -w\n");
            }
        }
        if (tcp) {
            s.append("  over java.nio TCP (TCP_NODELAY, one selector thread a side) on the interface of the device\n"
                    + "  -d or --transport selects; the client connects to SERVER, the server listens on that address\n");
        } else {
            s.append("  -e: the loop sleeps on the completion channel after its default busy-poll (50 us), as\n"
                    + "      perftest's -e; without it the loop polls without pause, as perftest does\n");
        }
        return s.append("  the server first (no SERVER), then the client with the server's address").toString();
    }
}
