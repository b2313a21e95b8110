package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.message.MessageBench;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelServer;

import java.io.PrintStream;
import java.util.concurrent.CompletableFuture;

/** What the channel benchmarks' servers and command lines share. */
final class ChannelServers {
    private ChannelServers() {}

    /** perftest's banner, then waits until the client's channel ends; its failure is this server's. */
    static void serveUntilClosed(ChannelGroup group, ChannelServer server, CompletableFuture<Throwable> ended,
                                 PrintStream out) throws Exception {
        MessageBench.banner(out, server.address(), group.selection().device().name());
        Throwable cause = ended.get();
        if (cause != null) {
            throw new IllegalStateException("the client's channel failed: " + cause.getMessage(), cause);
        }
    }
}
