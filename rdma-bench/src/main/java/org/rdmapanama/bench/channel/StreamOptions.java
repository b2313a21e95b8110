package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.Getopt;
import org.rdmapanama.bench.message.MessageBenchOptions;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of {@code channel_stream}: {@code -d DEV} or {@code --transport T}, {@code -p PORT},
 * {@code -s SPEC[,SPEC...]} (one checked stream per SPEC: {@code BYTES}, every message that size, or
 * {@code MIN-MAX}, sizes mixed between the two), {@code -n ITERS} or {@code -D SECONDS} per stream,
 * {@code --warmup SECONDS}, the channel's {@code -w WINDOW} and {@code --slot BYTES}; the server's
 * address as the operand makes a client.
 */
final class StreamOptions {
    static final int DEFAULT_PORT = 18531;
    /** The receiver's bitmap of this many messages is 2 MiB; a stream stops there. */
    static final long MAX_MESSAGES = 1L << 24;
    static final int MAX_SIZE = 16 << 20;

    /** Message sizes of one stream, MIN to MAX bytes (equal for a fixed size). */
    record Spec(int min, int max) {
        boolean mixed() {
            return min != max;
        }

        @Override
        public String toString() {
            return mixed() ? min + "-" + max : Integer.toString(min);
        }
    }

    String device;
    String transport;
    int port = DEFAULT_PORT;
    final List<Spec> specs = new ArrayList<>();
    int iters = -1;
    int seconds = -1;
    int warmup = 20;
    int window = ChannelOptions.defaults().window();
    int slot = ChannelOptions.defaults().slotSize();
    String server;

    /** Null for -h. */
    static StreamOptions parse(String[] args) {
        StreamOptions o = new StreamOptions();
        boolean[] help = {false};
        List<String> operands = new Getopt()
                .endpoint(() -> help[0] = true, v -> o.device = v, v -> o.transport = v, v -> o.port = v)
                .value((typed, v) -> {
                    for (String one : v.split(",", -1)) {
                        o.specs.add(spec(typed, one));
                    }
                }, "-s", "--size")
                .value(Getopt.number(1, (int) MAX_MESSAGES, v -> o.iters = v), "-n", "--iters")
                .value(Getopt.number(1, 3600, v -> o.seconds = v), "-D", "--duration")
                .value(Getopt.number(0, 600, v -> o.warmup = v), "--warmup")
                .value(Getopt.number(3, 4096, v -> o.window = v), "-w", "--window")
                .value(Getopt.number(64, 1 << 24, v -> o.slot = v), "--slot")
                .parse(args);
        if (help[0]) {
            return null;
        }
        o.server = Getopt.serverOperand(operands);
        if (o.iters > 0 && o.seconds > 0) {
            throw new IllegalArgumentException("-n and -D exclude each other");
        }
        if (Integer.bitCount(o.slot) != 1) {
            throw new IllegalArgumentException("--slot must be a power of two, got " + o.slot);
        }
        if (o.specs.isEmpty()) {
            o.specs.add(new Spec(64, 65536));
            o.specs.add(new Spec(65536, 65536));
        }
        if (o.iters < 0 && o.seconds < 0) {
            o.seconds = 5;
        }
        return o;
    }

    /** BYTES or MIN-MAX, each at least the header, MIN below MAX. */
    static Spec spec(String typed, String v) {
        int dash = v.indexOf('-');
        if (dash < 0) {
            int n = Getopt.number(typed, v, StreamCheck.HEADER, MAX_SIZE);
            return new Spec(n, n);
        }
        int min = Getopt.number(typed, v.substring(0, dash), StreamCheck.HEADER, MAX_SIZE);
        int max = Getopt.number(typed, v.substring(dash + 1), StreamCheck.HEADER, MAX_SIZE);
        if (min >= max) {
            throw new IllegalArgumentException("option " + typed + " wants MIN-MAX with MIN below MAX, got '" + v + "'");
        }
        return new Spec(min, max);
    }

    int largest() {
        return specs.stream().mapToInt(Spec::max).max().orElse(StreamCheck.HEADER);
    }

    RdmaConfig config() {
        return MessageBenchOptions.config(transport, device);
    }

    /**
     * Polls without pause, as perftest and channel_bw do. Queues at most 4 windows: more cannot go out any
     * sooner, and each queued rendezvous holds a pool buffer; with the default 1,024 the pool grew past the
     * 64 regions a peer may be told of and the receiver ended the channel (a protocol error).
     */
    ChannelOptions channelOptions() {
        ChannelOptions d = ChannelOptions.defaults();
        return d.withWindow(window).withSlotSize(slot).withMaxMessageSize(Math.max(largest(), d.maxMessageSize()))
                .withBusyPollNanos(Long.MAX_VALUE).withSendQueueLimit(Math.min(d.sendQueueLimit(), 4 * window));
    }

    static String usage() {
        return "usage: rdma-bench channel_stream [-d DEV | --transport T] [-p PORT] [-s SPEC[,SPEC...]]"
                + " [-n ITERS | -D SECONDS] [--warmup SECONDS] [-w WINDOW] [--slot BYTES] [SERVER]\n"
                + "  a checked one-way stream per SPEC: BYTES (every message that size) or MIN-MAX (sizes mixed,\n"
                + "  log-uniform, across the eager limit and rendezvous); default 64-65536,65536, -D 5 each\n"
                + "  every message carries its sequence number and a CRC32C; the server counts received, out of\n"
                + "  order, duplicated, missing and bad checksum, and both sides exit 1 if any is wrong\n"
                + "  --warmup: checked warm-up streams until the JIT is idle, at most SECONDS (20; 0: none)\n"
                + "  the server first (no SERVER), then the client with the server's address";
    }
}
