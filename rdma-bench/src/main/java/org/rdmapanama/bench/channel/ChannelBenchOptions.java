package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.Getopt;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of {@code channel_lat} and {@code channel_bw}, in perftest's
 * manner: {@code -d DEV} or {@code --transport T}, {@code -p PORT}, {@code -s SIZE}
 * (or a comma list of sizes) or {@code -a} (8 B to 4 MiB), {@code -n ITERS}, and the channel's own
 * {@code -w WINDOW} and {@code --slot BYTES}; the server's address as the
 * operand makes a client.
 */
final class ChannelBenchOptions {
    static final int DEFAULT_PORT = 18530;
    static final int MAX_ALL = 4 << 20;

    final boolean bandwidth;
    String device;
    String transport;
    int port = DEFAULT_PORT;
    int size = -1;
    List<Integer> sizeList = new ArrayList<>();
    boolean all;
    int iters = -1;
    int window = ChannelOptions.defaults().window();
    int slot = ChannelOptions.defaults().slotSize();
    /** perftest polls its CQ without pause unless -e; so does this, through the loop's busy-poll budget. */
    boolean events;
    String server;

    ChannelBenchOptions(boolean bandwidth) {
        this.bandwidth = bandwidth;
    }

    /** Null for -h. */
    static ChannelBenchOptions parse(boolean bandwidth, String[] args) {
        ChannelBenchOptions o = new ChannelBenchOptions(bandwidth);
        boolean[] help = {false};
        List<String> operands = new Getopt()
                .flag(() -> help[0] = true, "-h", "--help")
                .value(Getopt.nonEmpty(v -> o.device = v), "-d", "--ib-dev")
                .value(Getopt.nonEmpty(v -> o.transport = v), "--transport")
                .value(Getopt.number(1, 65535, v -> o.port = v), "-p", "--port")
                .value((typed, v) -> {
                    for (String one : v.split(",")) {
                        o.sizeList.add(Getopt.number(typed, one, 8, 1 << 30));
                    }
                    o.size = o.sizeList.get(0);
                }, "-s", "--size")
                .flag(() -> o.all = true, "-a", "--all")
                .value(Getopt.number(5, 100_000_000, v -> o.iters = v), "-n", "--iters")
                .value(Getopt.number(2, 4096, v -> o.window = v), "-w", "--window")
                .value(Getopt.number(64, 1 << 24, v -> o.slot = v), "--slot")
                .flag(() -> o.events = true, "-e", "--events")
                .parse(args);
        if (help[0]) {
            return null;
        }
        if (operands.size() > 1) {
            throw new IllegalArgumentException("one operand at most, the server's address; got " + operands);
        }
        o.server = operands.isEmpty() ? null : operands.get(0);
        if (o.all && o.size >= 0) {
            throw new IllegalArgumentException("-a and -s exclude each other");
        }
        if (Integer.bitCount(o.slot) != 1) {
            throw new IllegalArgumentException("--slot must be a power of two, got " + o.slot);
        }
        if (o.size < 0) {
            o.size = bandwidth ? 65536 : 64;
        }
        if (o.iters < 0) {
            o.iters = bandwidth ? 5000 : 1000;
        }
        return o;
    }

    List<Integer> sizes() {
        List<Integer> s = new ArrayList<>();
        if (all) {
            for (int b = 8; b <= MAX_ALL; b *= 2) {
                s.add(b);
            }
        } else if (!sizeList.isEmpty()) {
            s.addAll(sizeList);
        } else {
            s.add(size);
        }
        return s;
    }

    RdmaConfig config() {
        return ChannelServers.config(transport, device);
    }

    ChannelOptions channelOptions() {
        int largest = Math.max(all ? MAX_ALL : sizes().stream().mapToInt(Integer::intValue).max().orElse(size), 8);
        ChannelOptions d = ChannelOptions.defaults();
        return d.withWindow(window).withSlotSize(slot).withMaxMessageSize(Math.max(largest, d.maxMessageSize()))
                .withBusyPollNanos(events ? d.busyPollNanos() : Long.MAX_VALUE);
    }

    static String usage(String name) {
        return "usage: rdma-bench " + name + " [-d DEV | --transport T] [-p PORT] [-s SIZE | -a] [-n ITERS] [-w WINDOW]"
                + " [--slot BYTES] [-e] [SERVER]\n"
                + "  -e: the loop sleeps on the completion channel after its default busy-poll (50 us), as\n"
                + "      perftest's -e; without it the loop polls without pause, as perftest does\n"
                + "  the server first (no SERVER), then the client with the server's address";
    }
}
