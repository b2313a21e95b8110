package org.rdmapanama.netty.example;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guide's gRPC example over grpc-netty on 127.0.0.1: a unary call and a
 * server-streaming one, with the event-loop groups and channel types given
 * explicitly. Those four lines are all that changes to run it over RDMA
 * (GrpcExampleDeviceTest).
 */
class GrpcExampleTest {
    /** Per call: a deadline is absolute, and an emulated lab takes seconds to start a server. */
    private static CallOptions within30s() {
        return CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @EnumSource(TcpTransport.class)
    void unaryAndServerStreaming(TcpTransport transport) throws Exception {
        transport.assumeAvailable();
        unaryAndServerStreaming(transport.newGroup(1), transport.newGroup(2), transport.newGroup(1),
                transport.serverChannelType, transport.channelType, new InetSocketAddress("127.0.0.1", 0));
    }

    /** The example itself, on whichever transport the groups and channel types are of; shuts the groups down. */
    static void unaryAndServerStreaming(EventLoopGroup boss, EventLoopGroup workers, EventLoopGroup clientLoops,
                                        Class<? extends ServerChannel> serverType,
                                        Class<? extends Channel> channelType, InetSocketAddress at)
            throws Exception {
        Server server = null;
        ManagedChannel channel = null;
        try {
            server = NettyServerBuilder.forAddress(at)
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(workers)
                    .channelType(serverType)
                    .addService(Greeter.service())
                    .build()
                    .start();
            channel = NettyChannelBuilder.forAddress(at.getAddress().getHostAddress(), server.getPort())
                    .eventLoopGroup(clientLoops)
                    .channelType(channelType)
                    .usePlaintext()
                    .build();

            byte[] hello = ClientCalls.blockingUnaryCall(channel, Greeter.SAY_HELLO, within30s(), Greeter.utf8("rdma"));
            assertEquals("hello, rdma", Greeter.utf8(hello));

            // Larger than HTTP/2's 16 KiB frame and 64 KiB initial window: flow control has to work.
            int n = 50;
            int size = 100_000;
            Iterator<byte[]> replies = ClientCalls.blockingServerStreamingCall(channel, Greeter.COUNT, within30s(),
                    ByteBuffer.allocate(8).putInt(n).putInt(size).array());
            List<byte[]> got = new ArrayList<>();
            replies.forEachRemaining(got::add);
            assertEquals(n, got.size());
            for (int i = 0; i < n; i++) {
                byte[] r = got.get(i);
                assertEquals(size, r.length);
                assertEquals((byte) i, r[0]);
                assertEquals((byte) i, r[size - 1]);
            }
        } finally {
            if (channel != null) {
                channel.shutdownNow();
                assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS));
            }
            if (server != null) {
                server.shutdownNow();
                assertTrue(server.awaitTermination(10, TimeUnit.SECONDS));
            }
            for (EventLoopGroup g : new EventLoopGroup[] {clientLoops, workers, boss}) {
                assertTrue(g.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS));
            }
        }
    }
}
