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
import java.util.concurrent.TimeoutException;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * {@code rdma-bench channel_stream}: a one-way stream over one message channel in which every message
 * is numbered and checksummed ({@link StreamCheck}), checked by the server as it arrives; rows as
 * {@code ib_send_bw} prints them, then each stream's counts. Built to run across a lossy cable, where
 * the transport's retransmission, not the channel, must keep the stream whole: any message lost,
 * duplicated, out of order or corrupted fails the run on both sides (exit 1).
 */
public final class ChannelStreamCommand {
    private ChannelStreamCommand() {}

    private static final long WARMUP_STREAM_NANOS = 2_000_000_000L;

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("channel_stream", args, out, err, StreamOptions::parse, s -> s.println(StreamOptions.usage()),
                o -> o.server == null ? serve(o, out) : client(o, out, err));
    }

    private static int serve(StreamOptions o, PrintStream out) throws Exception {
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        boolean[] failed = {false};
        int[] streams = {0};
        try (ChannelGroup group = ChannelGroup.open(o.config(), o.channelOptions());
             ChannelServer server = group.listen(o.port, new MessageHandler() {
                 final StreamCheck check = new StreamCheck(group.options().maxMessageSize());

                 @Override
                 public void onMessage(MessageChannel ch, Message m) throws Exception {
                     long seq = m.length() == StreamCheck.HEADER ? m.segment().get(JAVA_LONG_UNALIGNED, 0) : 0;
                     if (seq == StreamCheck.START) {
                         check.start(m.segment().get(JAVA_LONG_UNALIGNED, 8));
                     } else if (seq == StreamCheck.END) {
                         long sent = m.segment().get(JAVA_LONG_UNALIGNED, 8);
                         MessageBuffer reply = ch.allocate(StreamCheck.REPORT_BYTES);
                         check.report(sent, reply.segment());
                         StreamCheck.Verdict v = StreamCheck.Verdict.read(sent, reply.segment());
                         ch.send(reply, StreamCheck.REPORT_BYTES);
                         failed[0] |= !v.ok();
                         out.println(" stream " + ++streams[0] + ": " + v.summary());
                     } else {
                         check.accept(m.segment(), m.length());
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
        return failed[0] ? CliArgs.FAILED : CliArgs.OK;
    }

    private static int client(StreamOptions o, PrintStream out, PrintStream err) throws Exception {
        boolean ok = true;
        try (ChannelGroup group = ChannelGroup.open(o.config(), o.channelOptions())) {
            Driver driver = new Driver(group.options().maxMessageSize());
            MessageChannel ch = group.connect(new InetSocketAddress(o.server, o.port), driver).get(30, TimeUnit.SECONDS);
            ok &= warmUp(driver, ch, o, err);
            out.println(PerftestRows.RESULT_LINE);
            out.println("                    Channel checked stream BW Test");
            out.println(" Device         : " + group.selection().device().name());
            out.println(" Transport      : " + group.selection().transport().displayName());
            out.println(" Window         : " + o.window + " messages, slots of " + o.slot + " B (eager up to "
                    + group.options().eagerLimit() + " B, rendezvous above)");
            out.println(" Streams        : " + (o.iters > 0 ? o.iters + " messages" : o.seconds + " s") + " each, sizes "
                    + o.specs + " B");
            out.println(PerftestRows.RESULT_LINE);
            out.println(PerftestRows.RESULT_FMT_BW);
            for (StreamOptions.Spec spec : o.specs) {
                Result r = stream(driver, ch, spec, o.iters, o.seconds * 1_000_000_000L);
                out.println(PerftestRows.row(r.row(spec)));
                // Each stream's counts at once: a later stream that fails must not take them with it.
                out.println(" stream " + spec + ": " + r.verdict.summary());
                ok &= r.verdict.ok();
            }
            out.println(PerftestRows.RESULT_LINE);
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
        if (!ok) {
            err.println("rdma-bench channel_stream: the stream was not delivered whole, once and in order (above)");
        }
        return ok ? CliArgs.OK : CliArgs.FAILED;
    }

    /** One stream, n messages or for the given time, waited for with a bound that a stalled transport passes. */
    private static Result stream(Driver driver, MessageChannel ch, StreamOptions.Spec spec, int n, long nanos)
            throws Exception {
        long limit = n > 0 ? n : StreamOptions.MAX_MESSAGES;
        long bound = n > 0 ? 600 : nanos / 1_000_000_000L + 60;
        try {
            return driver.start(ch, spec, limit, n > 0 ? 0 : nanos).get(bound, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("stream " + spec + " stalled: no report from the server within " + bound
                    + " s; " + driver.progress(), e);
        }
    }

    /**
     * Checked streams of every spec, thrown away but for their verdict, until this JVM's JIT has been idle
     * for {@link JitActivity#QUIET_NANOS} (at least 2 rounds, at most --warmup seconds): interpreted
     * checksums under the lab's emulation would measure the JIT, not the channel.
     */
    private static boolean warmUp(Driver driver, MessageChannel ch, StreamOptions o, PrintStream err) throws Exception {
        if (o.warmup == 0) {
            return true;
        }
        long start = System.nanoTime();
        JitActivity.Watch jit = new JitActivity.Watch(start);
        boolean ok = true;
        int rounds = 0;
        long now;
        do {
            for (StreamOptions.Spec spec : o.specs) {
                Result r = stream(driver, ch, spec, 0, WARMUP_STREAM_NANOS / o.specs.size());
                if (!r.verdict.ok()) {
                    err.println("client warm-up stream " + spec + ": " + r.verdict.summary());
                    ok = false;
                }
            }
            rounds++;
            now = System.nanoTime();
        } while (rounds < 2 || jit.busy(now) && now - start < o.warmup * 1_000_000_000L);
        err.printf("client warm-up: %d rounds of checked streams in %.1f s (until the JIT is idle for 1 s, at most %d s)%n",
                rounds, (now - start) / 1e9, o.warmup);
        return ok;
    }

    record Result(StreamCheck.Verdict verdict, long start, long end, long bytes) {
        /** perftest's row; a mixed stream's #bytes is its mean message size. */
        PerftestStats.Bandwidth row(StreamOptions.Spec spec) {
            double seconds = (end - start) / 1e9;
            long sent = verdict.sent();
            long size = spec.mixed() ? Math.round((double) bytes / Math.max(sent, 1)) : spec.min();
            double mbs = bytes / seconds / 0x100000;
            return new PerftestStats.Bandwidth(size, sent, mbs, mbs, sent / seconds / 1e6);
        }
    }

    /** Sends one stream at a time from the channel's loop thread, as many messages as the channel takes. */
    static final class Driver implements MessageHandler {
        private final StreamCheck check;
        private MessageChannel ch;
        private StreamOptions.Spec spec;
        private long limit;
        private long deadline;
        private long sent;
        private long bytes;
        private boolean ended;
        private long start;
        private CompletableFuture<Result> done;

        Driver(int largest) {
            check = new StreamCheck(largest);
        }

        CompletableFuture<Result> start(MessageChannel channel, StreamOptions.Spec s, long max, long nanos) {
            CompletableFuture<Result> f = new CompletableFuture<>();
            channel.execute(() -> {
                ch = channel;
                spec = s;
                limit = max;
                sent = bytes = 0;
                ended = false;
                done = f;
                try {
                    MessageBuffer b = ch.allocate(StreamCheck.HEADER);
                    StreamCheck.control(b.segment(), StreamCheck.START, limit);
                    ch.send(b, StreamCheck.HEADER);
                } catch (Exception e) {
                    f.completeExceptionally(e);
                    return;
                }
                start = System.nanoTime();
                deadline = nanos > 0 ? start + nanos : 0;
                fill();
            });
            return f;
        }

        /** Where a stalled stream stopped, read from another thread: a hint, racy by design. */
        String progress() {
            return "the client sent " + sent + " messages (" + bytes + " B), " + (ended ? "then the end" : "not the end yet")
                    + ", channel " + (ch == null ? "none" : (ch.isOpen() ? "open" : "not open") + (ch.isWritable()
                    ? ", writable" : ", not writable (sends queued)"));
        }

        /** Message {@code seq}'s size: fixed, or log-uniform between the spec's bounds, a function of seq. */
        static int size(StreamOptions.Spec s, long seq) {
            if (!s.mixed()) {
                return s.min();
            }
            double f = (StreamCheck.mix(seq ^ 0x5DEECE66DL) >>> 11) * 0x1.0p-53;
            long v = Math.round(s.min() * Math.pow((double) s.max() / s.min(), f));
            return (int) Math.max(s.min(), Math.min(s.max(), v));
        }

        private void fill() {
            try {
                while (!ended && ch.isWritable()) {
                    // nanoTime every 16 messages: the deadline needs no finer grain than that.
                    if (sent == limit || deadline != 0 && (sent & 15) == 0 && System.nanoTime() >= deadline) {
                        ended = true;
                        MessageBuffer b = ch.allocate(StreamCheck.HEADER);
                        StreamCheck.control(b.segment(), StreamCheck.END, sent);
                        ch.send(b, StreamCheck.HEADER);
                        return;
                    }
                    int len = size(spec, sent);
                    MessageBuffer b = ch.allocate(len);
                    check.fill(sent, len, b.segment());
                    ch.send(b, len);
                    sent++;
                    bytes += len;
                }
            } catch (Exception e) {
                done.completeExceptionally(e);
            }
        }

        @Override
        public void onWritabilityChanged(MessageChannel channel) {
            if (done != null && !done.isDone()) {
                fill();
            }
        }

        @Override
        public void onMessage(MessageChannel channel, Message m) {
            long now = System.nanoTime();
            try {
                if (m.length() != StreamCheck.REPORT_BYTES || !ended) {
                    done.completeExceptionally(new IllegalStateException("the server sent " + m.length()
                            + " B" + (ended ? "" : " before the stream's end") + "; a report is "
                            + StreamCheck.REPORT_BYTES + " B"));
                } else {
                    done.complete(new Result(StreamCheck.Verdict.read(sent, m.segment()), start, now, bytes));
                }
            } finally {
                m.release();
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
