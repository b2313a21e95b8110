package org.rdmapanama.netty.example;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.netty.channel.EventLoopGroup;
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
 * explicitly. Those four lines are all that changes to run it over RDMA.
 */
class GrpcExampleTest {
    private static final CallOptions WITHIN_10S = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);

    @ParameterizedTest
    @EnumSource(TcpTransport.class)
    void unaryAndServerStreaming(TcpTransport transport) throws Exception {
        transport.assumeAvailable();
        EventLoopGroup boss = transport.newGroup(1);
        EventLoopGroup workers = transport.newGroup(2);
        EventLoopGroup clientLoops = transport.newGroup(1);
        Server server = null;
        ManagedChannel channel = null;
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(workers)
                    .channelType(transport.serverChannelType)
                    .addService(Greeter.service())
                    .build()
                    .start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                    .eventLoopGroup(clientLoops)
                    .channelType(transport.channelType)
                    .usePlaintext()
                    .build();

            byte[] hello = ClientCalls.blockingUnaryCall(channel, Greeter.SAY_HELLO, WITHIN_10S, Greeter.utf8("rdma"));
            assertEquals("hello, rdma", Greeter.utf8(hello));

            // Larger than HTTP/2's 16 KiB frame and 64 KiB initial window: flow control has to work.
            int n = 50;
            int size = 100_000;
            Iterator<byte[]> replies = ClientCalls.blockingServerStreamingCall(channel, Greeter.COUNT, WITHIN_10S,
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
