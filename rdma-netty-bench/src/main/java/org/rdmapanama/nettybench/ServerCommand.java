package org.rdmapanama.nettybench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** {@code rdma-netty-bench server}: serves each side's echo on its port until the client stopped every one. */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Serves the echo of each side given on the device's address until the client's STOP to each.")
final class ServerCommand implements Callable<Integer> {
    @Mixin
    Endpoint endpoint;

    @Override
    public Integer call() throws Exception {
        Deque<AutoCloseable> open = new ArrayDeque<>(); // closed in reverse
        List<CompletableFuture<Void>> stops = new ArrayList<>();
        try {
            for (Side side : endpoint.sides) {
                CompletableFuture<Void> stop = new CompletableFuture<>();
                stops.add(stop);
                int port = endpoint.port(side);
                if (side == Side.CHANNEL) {
                    open.push(ChannelEcho.start(endpoint, port, stop));
                } else {
                    NettyNet net = NettyNet.of(side, endpoint);
                    open.push(net);
                    open.push(side.grpc() ? GrpcEcho.start(net, port, stop) : NettyEcho.start(net, port, stop));
                }
                System.out.println("rdma-netty-bench: " + side.label + " server listening on port " + port
                        + (endpoint.device != null ? " (" + endpoint.device + ")" : ""));
            }
            CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new)).join();
            Thread.sleep(200); // the last STOP's reply goes out first
        } finally {
            Exception first = null;
            while (!open.isEmpty()) {
                try {
                    open.pop().close();
                } catch (Exception e) {
                    if (first == null) first = e; else first.addSuppressed(e);
                }
            }
            if (first != null) throw first;
        }
        System.out.println("rdma-netty-bench: server done");
        return 0;
    }
}
