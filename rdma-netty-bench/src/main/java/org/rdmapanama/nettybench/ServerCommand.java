package org.rdmapanama.nettybench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.concurrent.Callable;

/** {@code rdma-netty-bench server}: serves one side's echo until a client says STOP. */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Serves the echo of one side on the device's address until the client's STOP.")
final class ServerCommand implements Callable<Integer> {
    @Mixin
    Endpoint endpoint;

    @Override
    public Integer call() throws Exception {
        Side side = endpoint.side;
        int port = endpoint.port();
        Runnable listening = () -> System.out.println("rdma-netty-bench: " + side.label + " server listening on port "
                + port + (endpoint.device != null ? " (" + endpoint.device + ")" : ""));
        switch (side) {
            case CHANNEL -> ChannelEcho.serve(endpoint, listening);
            case NETTY_RDMA, NETTY_EPOLL -> {
                try (NettyNet net = NettyNet.of(side, endpoint)) {
                    NettyEcho.serve(net, port, listening);
                }
            }
            case GRPC_RDMA, GRPC_EPOLL -> {
                try (NettyNet net = NettyNet.of(side, endpoint)) {
                    GrpcEcho.serve(net, port, listening);
                }
            }
        }
        System.out.println("rdma-netty-bench: server done");
        return 0;
    }
}
