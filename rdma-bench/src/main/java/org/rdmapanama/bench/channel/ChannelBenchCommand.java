package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.JitActivity;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * {@code rdma-bench channel_lat} (ping-pong, half the round trip, as
 * {@code ib_send_lat} reports it) and {@code channel_bw} (one-way messages
 * as fast as the window allows, as {@code ib_send_bw}), over one message
 * channel, with perftest's header and table. The client drives everything
 * from its channel's loop thread, after a warm-up until its JIT is idle; the server echoes ({@link #ECHO}), counts
 * ({@link #SINK}) and reports the count ({@link #FIN}).
 */
public final class ChannelBenchCommand {
    private ChannelBenchCommand() {}

    static final int ECHO = 1;
    static final int SINK = 2;
    static final int FIN = 3;
    private static final int WARMUP = 2000;
    /**
     * Messages a warm-up sends at least: enough for C2 to take the data path (its tier-4 thresholds are
     * 5,000 to 15,000 calls in profiling code). An idle JIT alone was not enough under emulation, where
     * compiles come seconds apart (docs/results/2026-12-07-channel-latency.md).
     */
    private static final long WARMUP_MIN_MESSAGES = 30_000;
    private static final long WARMUP_MAX_NANOS = 90_000_000_000L;

    public static int run(String name, String[] args, PrintStream out, PrintStream err) {
        boolean bw = name.equals("channel_bw");
        return CliArgs.run(name, args, out, err, a -> ChannelBenchOptions.parse(bw, a),
                s -> s.println(ChannelBenchOptions.usage(name)),
                o -> o.server == null ? serve(o, out) : client(name, o, out, err));
    }

    private static int serve(ChannelBenchOptions o, PrintStream out) throws Exception {
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        long[] sunk = {0};
        try (ChannelGroup group = ChannelGroup.open(o.config(), o.channelOptions());
             ChannelServer server = group.listen(o.port, new MessageHandler() {
                 @Override
                 public void onMessage(MessageChannel ch, Message m) throws Exception {
                     int op = m.length() >= 4 ? m.segment().get(JAVA_INT_UNALIGNED, 0) : 0;
                     if (op == ECHO) {
                         MessageBuffer reply = ch.allocate(m.length());
                         reply.segment().set(JAVA_INT_UNALIGNED, 0, ECHO);
                         ch.send(reply, m.length());
                     } else if (op == SINK) {
                         sunk[0]++;
                     } else if (op == FIN) {
                         MessageBuffer reply = ch.allocate(8);
                         reply.segment().set(JAVA_LONG_UNALIGNED, 0, sunk[0]);
                         sunk[0] = 0;
                         ch.send(reply, 8);
                     }
                     m.release();
                 }

                 @Override
                 public void onClose(MessageChannel ch, Throwable cause) {
                     ended.complete(cause);
                 }
             })) {
            ChannelServers.serveUntilClosed(group, server, ended, out);
        }
        return CliArgs.OK;
    }

    private static int client(String name, ChannelBenchOptions o, PrintStream out, PrintStream err) throws Exception {
        Driver driver = new Driver();
        try (ChannelGroup group = ChannelGroup.open(o.config(), o.channelOptions())) {
            MessageChannel ch = group.connect(new InetSocketAddress(o.server, o.port), driver).get(30, TimeUnit.SECONDS);
            header(name, o, group, out);
            warmUp(driver, ch, o, err);
            if (o.bandwidth) {
                for (int size : o.sizes()) {
                    long[] t = driver.stream(ch, size, o.iters).get(600, TimeUnit.SECONDS);
                    out.println(PerftestRows.row(PerftestStats.bandwidth(size, o.iters, null, null, 1, t[0], t[1], false)));
                }
            } else {
                for (int size : o.sizes()) {
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

    /**
     * {@link #WARMUP_MIN_MESSAGES} of the smallest size (64 MiB at most), then rounds of every size, thrown away, until
     * this JVM's JIT has been idle for {@link JitActivity#QUIET_NANOS} (at least 3, all within
     * {@link #WARMUP_MAX_NANOS}): under the lab's emulation an interpreted loop is many times slower
     * than the compiled one.
     */
    private static void warmUp(Driver driver, MessageChannel ch, ChannelBenchOptions o, PrintStream err)
            throws Exception {
        long start = System.nanoTime();
        JitActivity.Watch jit = new JitActivity.Watch(start);
        int rounds = 0;
        long messages = 0;
        int smallest = o.sizes().stream().mapToInt(Integer::intValue).min().orElse(o.size);
        long least = Math.min(WARMUP_MIN_MESSAGES, Math.max(WARMUP, (64L << 20) / smallest)); // 64 MiB at most
        int batch = (int) Math.min(WARMUP, least);
        while (messages < least && System.nanoTime() - start < WARMUP_MAX_NANOS) {
            (o.bandwidth ? driver.stream(ch, smallest, batch) : driver.pingPong(ch, smallest, batch))
                    .get(120, TimeUnit.SECONDS); // the smallest size: the most calls of the data path per second
            messages += batch;
        }
        long now;
        do {
            for (int size : o.sizes()) {
                int n = (int) Math.min(WARMUP, Math.max(50, (16L << 20) / size)); // a few seconds at most per size
                (o.bandwidth ? driver.stream(ch, size, n) : driver.pingPong(ch, size, n)).get(120, TimeUnit.SECONDS);
            }
            rounds++;
            now = System.nanoTime();
        } while ((rounds < 3 || jit.busy(now)) && now - start < WARMUP_MAX_NANOS);
        err.printf("client warm-up: %d messages of %d B, then %d rounds of every size; %.1f s (until the JIT is idle"
                + " for 1 s, at most %d s)%n", least, smallest, rounds, (now - start) / 1e9,
                WARMUP_MAX_NANOS / 1_000_000_000L);
    }

    private static void header(String name, ChannelBenchOptions o, ChannelGroup g, PrintStream out) {
        out.println(PerftestRows.RESULT_LINE);
        out.println("                    " + (o.bandwidth ? "Channel message BW Test" : "Channel ping-pong Latency Test"));
        out.println(" Device         : " + g.selection().device().name());
        out.println(" Transport      : " + g.selection().transport().displayName());
        out.println(" Window         : " + o.window + " messages, slots of " + o.slot + " B (eager up to "
                + g.options().eagerLimit() + " B, rendezvous above)");
        out.println(PerftestRows.RESULT_LINE);
        out.println(o.bandwidth ? PerftestRows.RESULT_FMT_BW : PerftestRows.RESULT_FMT_LAT);
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
