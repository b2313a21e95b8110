package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.message.MessageBench;
import org.rdmapanama.bench.message.MessageBenchOptions;
import org.rdmapanama.bench.message.MessageBenchOptions.Kind;
import org.rdmapanama.bench.perftest.PerftestRows;
import org.rdmapanama.bench.perftest.PerftestStats;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.channel.MessageHandler;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.rdmapanama.bench.message.MessageBench.ECHO;
import static org.rdmapanama.bench.message.MessageBench.FIN;
import static org.rdmapanama.bench.message.MessageBench.SINK;

/**
 * {@code rdma-bench channel_lat} (ping-pong, half the round trip, as
 * {@code ib_send_lat} reports it), {@code channel_bw} (one-way messages
 * as fast as the window allows, as {@code ib_send_bw}) over one message
 * channel, and {@code channel_rpc} (C channels with W requests outstanding on each), with perftest's header
 * and table. The client drives everything from its channels' loop thread, after a warm-up until its JIT is
 * idle; the server echoes ({@link MessageBench#ECHO}), counts ({@link MessageBench#SINK}) and reports the
 * count ({@link MessageBench#FIN}) until the last of its channels closes.
 */
public final class ChannelBenchCommand {
    private ChannelBenchCommand() {}

    public static int run(String name, String[] args, PrintStream out, PrintStream err) {
        Kind kind = MessageBenchOptions.kindOf(name);
        return CliArgs.run(name, args, out, err, a -> MessageBenchOptions.parse(kind, false, a),
                s -> s.println(MessageBenchOptions.usage(name)),
                o -> o.server == null ? serve(o, out) : client(o, out, err));
    }

    private static int serve(MessageBenchOptions o, PrintStream out) throws Exception {
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        try (ChannelGroup group = ChannelGroup.open(o.config(), o.channelOptions());
             ChannelServer server = group.listen(o.port, new MessageHandler() {
                 private long sunk; // one counter: the bandwidth test runs over one channel
                 private int open;  // all on the one loop thread

                 @Override
                 public void onOpen(MessageChannel ch) {
                     open++;
                 }

                 @Override
                 public void onMessage(MessageChannel ch, Message m) throws Exception {
                     int op = m.length() >= 4 ? m.segment().get(JAVA_INT_UNALIGNED, 0) : 0;
                     if (op == ECHO) {
                         MessageBuffer reply = ch.allocate(m.length());
                         reply.segment().set(JAVA_INT_UNALIGNED, 0, ECHO);
                         ch.send(reply, m.length());
                     } else if (op == SINK) {
                         sunk++;
                     } else if (op == FIN) {
                         MessageBuffer reply = ch.allocate(8);
                         reply.segment().set(JAVA_LONG_UNALIGNED, 0, sunk);
                         sunk = 0;
                         ch.send(reply, 8);
                     }
                     m.release();
                 }

                 @Override
                 public void onClose(MessageChannel ch, Throwable cause) {
                     // The client opens all its channels before it closes any (each carries requests first).
                     if (cause != null || --open <= 0) {
                         ended.complete(cause);
                     }
                 }
             })) {
            ChannelServers.serveUntilClosed(group, server, ended, out);
        }
        return CliArgs.OK;
    }

    private static int client(MessageBenchOptions o, PrintStream out, PrintStream err) throws Exception {
        try (ChannelGroup group = ChannelGroup.open(o.config(), o.channelOptions())) {
            InetSocketAddress at = new InetSocketAddress(o.server, o.port);
            if (o.kind == Kind.RPC) {
                rpc(group, at, o, out, err);
                return CliArgs.OK;
            }
            Driver driver = new Driver();
            MessageChannel ch = group.connect(at, driver).get(30, TimeUnit.SECONDS);
            header(o, group, out);
            boolean bw = o.kind == Kind.BW;
            MessageBench.warmUp((size, n) -> (bw ? driver.stream(ch, size, n) : driver.pingPong(ch, size, n))
                    .get(120, TimeUnit.SECONDS), o.sizes(), 1, o.warmupSeconds, err);
            for (int size : o.sizes()) {
                if (bw) {
                    long[] t = driver.stream(ch, size, o.iters).get(600, TimeUnit.SECONDS);
                    out.println(PerftestRows.row(PerftestStats.bandwidth(size, o.iters, null, null, 1, t[0], t[1], false)));
                } else {
                    long[] stamps = driver.pingPong(ch, size, o.iters).get(600, TimeUnit.SECONDS);
                    out.println(PerftestRows.row(PerftestStats.latency(size, stamps, o.iters, 2)));
                }
            }
            out.println(PerftestRows.RESULT_LINE);
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
        return CliArgs.OK;
    }

    /** C channels, all on the group's one loop thread, which issues every request and records every reply. */
    private static void rpc(ChannelGroup group, InetSocketAddress at, MessageBenchOptions o, PrintStream out,
                            PrintStream err) throws Exception {
        ChannelRpcDriver driver = new ChannelRpcDriver(o.outstanding);
        List<MessageChannel> channels = new ArrayList<>();
        try {
            for (int i = 0; i < o.connections; i++) {
                channels.add(group.connect(at, driver).get(30, TimeUnit.SECONDS));
            }
            header(o, group, out);
            MessageBench.warmUp((size, n) -> driver.run(channels, size, Math.max(o.outstanding, n / o.connections))
                    .get(120, TimeUnit.SECONDS), o.sizes(), o.connections * o.outstanding, o.warmupSeconds, err);
            for (int size : o.sizes()) {
                long nanos = driver.run(channels, size, o.iters).get(600, TimeUnit.SECONDS);
                out.println(driver.latencies().row(size, nanos));
            }
            out.println(PerftestRows.RESULT_LINE);
        } finally {
            for (MessageChannel ch : channels) {
                ch.close();
            }
        }
        for (MessageChannel ch : channels) {
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static void header(MessageBenchOptions o, ChannelGroup g, PrintStream out) {
        String window = o.window + " messages, slots of " + o.slot + " B (eager up to " + g.options().eagerLimit()
                + " B, rendezvous above)";
        String device = g.selection().device().name();
        String transport = g.selection().transport().displayName();
        String title = MessageBench.title("Channel", o.kind);
        if (o.kind == Kind.RPC) {
            MessageBench.header(out, o.kind, title, device, transport, "Connections", MessageBench.connections(o),
                    "Window", window);
        } else {
            MessageBench.header(out, o.kind, title, device, transport, "Window", window);
        }
    }

    /** Runs one measurement at a time on the channel's loop thread. */
    static final class Driver implements MessageHandler {
        private MessageChannel ch;
        private int size;
        private long iters;
        private long count;
        private long[] stamps;
        private boolean streaming;
        private boolean finSent;
        private long start;
        private CompletableFuture<long[]> done;

        CompletableFuture<long[]> pingPong(MessageChannel channel, int bytes, int n) {
            return start(channel, bytes, n, false);
        }

        CompletableFuture<long[]> stream(MessageChannel channel, int bytes, int n) {
            return start(channel, bytes, n, true);
        }

        /** Resets the driver on the loop thread and sends the first message (or window) there. */
        private CompletableFuture<long[]> start(MessageChannel channel, int bytes, int n, boolean oneWay) {
            CompletableFuture<long[]> f = new CompletableFuture<>();
            channel.execute(() -> {
                ch = channel;
                size = bytes;
                iters = n;
                count = 0;
                streaming = oneWay;
                finSent = false;
                done = f;
                start = System.nanoTime();
                if (oneWay) {
                    fill();
                } else {
                    stamps = new long[n];
                    ping();
                }
            });
            return f;
        }

        private void ping() {
            try {
                stamps[(int) count] = System.nanoTime();
                MessageBuffer b = ch.allocate(size);
                b.segment().set(JAVA_INT_UNALIGNED, 0, ECHO);
                ch.send(b, size);
            } catch (Exception e) {
                done.completeExceptionally(e);
            }
        }

        private void fill() {
            try {
                while (count < iters && ch.isWritable()) {
                    MessageBuffer b = ch.allocate(size);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, SINK);
                    ch.send(b, size);
                    count++;
                }
                if (count == iters && !finSent) {
                    finSent = true;
                    MessageBuffer b = ch.allocate(8);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, FIN);
                    ch.send(b, 8);
                }
            } catch (Exception e) {
                done.completeExceptionally(e);
            }
        }

        @Override
        public void onWritabilityChanged(MessageChannel channel) {
            if (streaming && done != null && !done.isDone()) {
                fill();
            }
        }

        @Override
        public void onMessage(MessageChannel channel, Message m) {
            if (streaming) {
                long got = m.segment().get(JAVA_LONG_UNALIGNED, 0);
                m.release();
                if (got != iters) {
                    done.completeExceptionally(new IllegalStateException("the server counted " + got + " of "
                            + iters + " messages"));
                } else {
                    done.complete(new long[] {start, System.nanoTime()});
                }
                return;
            }
            m.release();
            if (++count < iters) {
                ping();
            } else {
                done.complete(stamps);
            }
        }

        @Override
        public void onClose(MessageChannel channel, Throwable cause) {
            if (done != null && !done.isDone()) {
                done.completeExceptionally(cause != null ? cause : new IllegalStateException("the channel closed"));
            }
        }
    }
}
