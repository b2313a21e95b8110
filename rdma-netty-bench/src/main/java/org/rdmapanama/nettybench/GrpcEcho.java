package org.rdmapanama.nettybench;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The echo as a gRPC service written by hand (byte[] messages, no protoc; the transport sees only HTTP/2
 * frames): a unary Echo, a bidirectional Stream that answers each message, and Cpu and Stop. Server and
 * client run their calls on the Netty event loops ({@code directExecutor}); each connection is a
 * {@link ManagedChannel}. Only the event-loop groups and the channel types differ between RDMA and epoll.
 */
final class GrpcEcho {
    private GrpcEcho() {}

    static final String SERVICE = "rdmapanama.bench.Echo";

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> ECHO = method("Echo", MethodDescriptor.MethodType.UNARY);
    static final MethodDescriptor<byte[], byte[]> STREAM = method("Stream", MethodDescriptor.MethodType.BIDI_STREAMING);
    static final MethodDescriptor<byte[], byte[]> CPU = method("Cpu", MethodDescriptor.MethodType.UNARY);
    static final MethodDescriptor<byte[], byte[]> STOP = method("Stop", MethodDescriptor.MethodType.UNARY);

    private static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }

    static byte[] cpu() {
        return ByteBuffer.allocate(8).putLong(Wire.processCpuNanos()).array();
    }

    static ServerServiceDefinition service(CompletableFuture<Void> stop) {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, replies) -> {
                    replies.onNext(request);
                    replies.onCompleted();
                }))
                .addMethod(STREAM, ServerCalls.asyncBidiStreamingCall(replies -> new StreamObserver<byte[]>() {
                    @Override public void onNext(byte[] request) { replies.onNext(request); }
                    @Override public void onError(Throwable t) { }
                    @Override public void onCompleted() { replies.onCompleted(); }
                }))
                .addMethod(CPU, ServerCalls.asyncUnaryCall((request, replies) -> {
                    replies.onNext(cpu());
                    replies.onCompleted();
                }))
                .addMethod(STOP, ServerCalls.asyncUnaryCall((request, replies) -> {
                    replies.onNext(cpu());
                    replies.onCompleted();
                    stop.complete(null);
                }))
                .build();
    }

    /** Listens on {@code port}; a client's Stop completes {@code stop}. Closing it shuts the server down. */
    static AutoCloseable start(NettyNet net, int port, CompletableFuture<Void> stop) throws Exception {
        EventLoopGroup boss = net.newGroup(1);
        EventLoopGroup workers = net.newGroup(1);
        AutoCloseable down = () -> {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        };
        try {
            Server server = NettyServerBuilder.forAddress(new InetSocketAddress(net.address, port))
                    .bossEventLoopGroup(boss).workerEventLoopGroup(workers).channelType(net.serverType)
                    .directExecutor().addService(service(stop)).build().start();
            return () -> {
                server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                down.close();
            };
        } catch (Exception e) {
            down.close();
            throw e;
        }
    }

    /** Mode 0: unary calls, W outstanding per channel; mode 1: a bidirectional stream per channel, W messages in flight. */
    @SuppressWarnings("try")
    static final class Client implements Driver {
        private final NettyNet net;
        private final InetSocketAddress server;
        private final EventLoopGroup group;
        private final List<String> series;
        private final java.util.ArrayList<Lane> lanes = new java.util.ArrayList<>();
        private final Load load = new Load();

        Client(NettyNet net, InetSocketAddress server, List<String> series) {
            this.net = net;
            this.server = server;
            this.series = series;
            this.group = net.newGroup(1);
        }

        @Override
        public List<String> series() {
            return series;
        }

        @Override
        public void connect(int n) throws Exception {
            while (lanes.size() < n) {
                ManagedChannel ch = NettyChannelBuilder.forAddress(server.getAddress().getHostAddress(), server.getPort())
                        .eventLoopGroup(group).channelType(net.channelType).usePlaintext().directExecutor()
                        .maxInboundMessageSize(Wire.MAX_FRAME).build();
                // Connected by its first call: a gRPC channel connects lazily.
                ClientCalls.blockingUnaryCall(ch, CPU, deadline(), new byte[0]);
                lanes.add(new Lane(ch));
            }
        }

        private static CallOptions deadline() {
            return CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS);
        }

        @Override
        public CompletableFuture<Load> run(int mode, Result.Case c, long nanos, boolean record) {
            CompletableFuture<Load> f = new CompletableFuture<>();
            byte[] request = new byte[c.bytes()];
            group.next().execute(() -> {
                load.begin(record, nanos, c.connections()).whenComplete((l, x) -> {
                    if (x != null) f.completeExceptionally(x); else f.complete(l);
                });
                for (int i = 0; i < c.connections(); i++) {
                    lanes.get(i).start(mode == 1, request, c.window());
                }
            });
            return f;
        }

        @Override
        public long serverCpu(boolean stop) {
            byte[] r = ClientCalls.blockingUnaryCall(lanes.getFirst().channel, stop ? STOP : CPU, deadline(), new byte[0]);
            return ByteBuffer.wrap(r).getLong();
        }

        @Override
        public void close() throws Exception {
            for (Lane l : lanes) {
                l.channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }

        /** One channel's calls, on the client's event loop (directExecutor: the callbacks run there). */
        private final class Lane {
            final ManagedChannel channel;
            final Load.Lane lane = new Load.Lane(Load.MAX_OUTSTANDING);
            private byte[] request;
            private StreamObserver<byte[]> stream;

            Lane(ManagedChannel channel) {
                this.channel = channel;
            }

            void start(boolean streaming, byte[] req, int window) {
                request = req;
                load.enter(lane);
                stream = streaming ? ClientCalls.asyncBidiStreamingCall(channel.newCall(STREAM, CallOptions.DEFAULT),
                        new Replies(true)) : null;
                for (int i = 0; i < window; i++) {
                    issue();
                }
            }

            private void issue() {
                load.issued(lane, System.nanoTime());
                if (stream != null) {
                    stream.onNext(request);
                } else {
                    ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), request, new Replies(false));
                }
            }

            /** A unary call's (one reply, then completion) or the stream's (every reply). */
            private final class Replies implements StreamObserver<byte[]> {
                private final boolean streaming;
                private int length = -1;

                Replies(boolean streaming) {
                    this.streaming = streaming;
                }

                @Override
                public void onNext(byte[] reply) {
                    if (streaming) {
                        replied(reply.length);
                    } else {
                        length = reply.length;
                    }
                }

                @Override
                public void onCompleted() {
                    if (!streaming) {
                        replied(length);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    load.fail(t);
                }

                private void replied(int len) {
                    long now = System.nanoTime();
                    if (len != request.length) {
                        load.fail(new IllegalStateException("a reply of " + len + " B to a request of "
                                + request.length + " B"));
                    } else if (load.reply(lane, now)) {
                        issue();
                    } else if (streaming && lane.drained()) {
                        stream.onCompleted();
                    }
                }
            }
        }
    }
}
