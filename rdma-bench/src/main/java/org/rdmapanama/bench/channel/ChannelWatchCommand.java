package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.Getopt;
import org.rdmapanama.bench.message.MessageBench;
import org.rdmapanama.bench.message.MessageBenchOptions;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.channel.MessageHandler;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code rdma-bench channel_watch}: one idle channel, to see how soon a peer or
 * link that goes silent shows. The client connects, then sends nothing; with
 * {@code --keepalive MS} its keepalives are what must fail. It prints how long
 * the channel lived idle and why it ended; exit 0 when it ended with a cause,
 * 1 when it was still open after {@code --limit} seconds.
 */
public final class ChannelWatchCommand {
    private ChannelWatchCommand() {}

    static final class Options {
        String device;
        String transport;
        int port = MessageBenchOptions.CHANNEL_PORT;
        int keepaliveMs = 100;
        int limitSeconds = 60;
        String server;

        ChannelOptions channelOptions() {
            return ChannelOptions.defaults().withKeepaliveNanos(TimeUnit.MILLISECONDS.toNanos(keepaliveMs));
        }
    }

    static Options parse(String[] args) {
        Options o = new Options();
        boolean[] help = {false};
        List<String> operands = new Getopt()
                .endpoint(() -> help[0] = true, v -> o.device = v, v -> o.transport = v, v -> o.port = v)
                .value(Getopt.number(0, 3_600_000, v -> o.keepaliveMs = v), "--keepalive")
                .value(Getopt.number(1, 86_400, v -> o.limitSeconds = v), "--limit")
                .parse(args);
        if (help[0]) {
            return null;
        }
        o.server = Getopt.serverOperand(operands);
        return o;
    }

    static String usage() {
        return "usage: rdma-bench channel_watch [-d DEV | --transport T] [-p PORT] [--keepalive MS] [--limit S] [SERVER]\n"
                + "  one idle channel: the client connects and sends nothing; it prints how long the channel lived\n"
                + "  and why it ended (exit 0), or exits 1 if it is still open after --limit seconds (60)\n"
                + "  --keepalive: a CREDIT after MS ms without a post (100; 0: none), whose send fails when the\n"
                + "  peer or the link is gone; the server first (no SERVER), then the client";
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("channel_watch", args, out, err, ChannelWatchCommand::parse, s -> s.println(usage()),
                o -> o.server == null ? serve(o, out) : watch(o, out));
    }

    /** Accepts one channel and waits until it ends; how it ended is printed, not judged. */
    private static int serve(Options o, PrintStream out) throws Exception {
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        try (ChannelGroup group = ChannelGroup.open(MessageBenchOptions.config(o.transport, o.device), o.channelOptions());
             ChannelServer server = group.listen(o.port, new MessageHandler() {
                 @Override
                 public void onMessage(MessageChannel ch, org.rdmapanama.channel.Message m) {
                     m.release();
                 }

                 @Override
                 public void onClose(MessageChannel ch, Throwable cause) {
                     ended.complete(cause);
                 }
             })) {
            MessageBench.banner(out, server.address(), group.selection().device().name());
            Throwable cause = ended.get();
            out.println("the client's channel ended: " + (cause == null ? "closed" : cause.getMessage()));
        }
        return CliArgs.OK;
    }

    private static int watch(Options o, PrintStream out) throws Exception {
        try (ChannelGroup group = ChannelGroup.open(MessageBenchOptions.config(o.transport, o.device), o.channelOptions())) {
            MessageChannel ch = group.connect(new InetSocketAddress(o.server, o.port), (c, m) -> m.release())
                    .get(30, TimeUnit.SECONDS);
            long start = System.nanoTime();
            out.println("connected to " + o.server + ":" + o.port + " on " + group.selection().device().name()
                    + "; idle, keepalive " + (o.keepaliveMs == 0 ? "off" : "every " + o.keepaliveMs + " ms"));
            out.flush();
            try {
                ch.closeFuture().get(o.limitSeconds, TimeUnit.SECONDS);
                out.println("the channel was closed by the peer after " + millis(start) + " ms idle");
            } catch (TimeoutException e) {
                out.println("the channel is still open after " + o.limitSeconds + " s idle");
                return CliArgs.FAILED;
            } catch (java.util.concurrent.ExecutionException e) {
                out.println("the channel ended after " + millis(start) + " ms idle: " + e.getCause().getMessage());
            }
        }
        return CliArgs.OK;
    }

    private static long millis(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
