package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.perftest.PerftestRows;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.device.RdmaConfig;

import java.io.PrintStream;
import java.util.concurrent.CompletableFuture;

/** What the channel benchmarks' servers and command lines share. */
final class ChannelServers {
    private ChannelServers() {}

    /** perftest's banner, then waits until the client's channel ends; its failure is this server's. */
    static void serveUntilClosed(ChannelGroup group, ChannelServer server, CompletableFuture<Throwable> ended,
                                 PrintStream out) throws Exception {
        out.println(PerftestRows.RESULT_LINE);
        out.println("                    Waiting for client to connect... (" + server.address() + ", "
                + group.selection().device().name() + ")");
        out.println(PerftestRows.RESULT_LINE);
        Throwable cause = ended.get();
        if (cause != null) {
            throw new IllegalStateException("the client's channel failed: " + cause.getMessage(), cause);
        }
    }

    /** The configuration (RDMA_* and rdma.*) with -d and --transport on top. */
    static RdmaConfig config(String transport, String device) {
        RdmaConfig c = RdmaConfig.load();
        if (transport != null) {
            c = c.withTransport(transport);
        }
        if (device != null) {
            c = c.withDevice(device);
        }
        return c;
    }
}
