package org.rdmapanama.nettybench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code rdma-netty-bench server|client|report}: the echo/RPC benchmark of Netty over RDMA against Netty over
 * epoll TCP, the raw message channel, and gRPC over both (scripts/bench-netty runs them side by side).
 */
@Command(name = "rdma-netty-bench", mixinStandardHelpOptions = true,
        subcommands = {ServerCommand.class, ClientCommand.class, ReportCommand.class},
        description = {"Netty echo/RPC over RDMA vs epoll TCP vs the raw message channel, and gRPC over both.",
                "Start a server, then a client (same --side) a few seconds later."})
public final class Main implements Runnable {
    @Override
    public void run() {
        CommandLine.usage(this, System.out);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }
}
