package org.rdmapanama.nettybench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The Netty echo, the same code on every Netty transport: length-prefixed frames
 * ({@link LengthFieldBasedFrameDecoder}), a server that writes each frame back and flushes once per read
 * burst, and a client whose handlers keep W requests outstanding per connection, writing in channelRead and
 * flushing in channelReadComplete. One event loop a side: each process is pinned to one vCPU in the lab.
 */
final class NettyEcho {
    private NettyEcho() {}

    static LengthFieldBasedFrameDecoder frames() {
        return new LengthFieldBasedFrameDecoder(Wire.MAX_FRAME, 0, 4, 0, 0);
    }

    static ByteBuf control(ChannelHandlerContext ctx, int op, long value) {
        return ctx.alloc().directBuffer(16).writeInt(12).writeInt(op).writeLong(value);
    }

    /** Listens on {@code port}; a client's STOP completes {@code stop}. Closing it shuts the server down. */
    static AutoCloseable start(NettyNet net, int port, CompletableFuture<Void> stop) throws Exception {
        EventLoopGroup boss = net.newGroup(1);
        EventLoopGroup workers = net.newGroup(1);
        AutoCloseable down = () -> {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        };
        try {
            ServerHandler handler = new ServerHandler(stop);
            Channel server = new ServerBootstrap().group(boss, workers).channel(net.serverType)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(frames(), handler);
                        }
                    })
                    .bind(new InetSocketAddress(net.address, port)).sync().channel();
            return () -> {
                server.close().await(10, TimeUnit.SECONDS);
                down.close();
            };
        } catch (Exception e) {
            down.close();
            throw e;
        }
    }

    @ChannelHandler.Sharable
    static final class ServerHandler extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<Void> stop;

        ServerHandler(CompletableFuture<Void> stop) {
            this.stop = stop;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf f = (ByteBuf) msg;
            int op = f.getInt(f.readerIndex() + 4);
            if (op == Wire.ECHO) {
                ctx.write(f, ctx.voidPromise());
                return;
            }
            f.release();
            ctx.writeAndFlush(control(ctx, op, Wire.answer(op)))
                    .addListener(x -> {
                        if (op == Wire.STOP) {
                            stop.complete(null);
                        }
                    });
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** The client: connections on one event loop, each with its {@link Lane}. */
    @SuppressWarnings("try")
    static final class Client implements Driver {
        private final NettyNet net;
        private final InetSocketAddress server;
        private final EventLoopGroup group;
        private final List<Lane> lanes = new ArrayList<>();
        private final Load load = new Load();
        private final String series;

        Client(NettyNet net, InetSocketAddress server, String series) {
            this.net = net;
            this.server = server;
            this.series = series;
            this.group = net.newGroup(1);
        }

        @Override
        public List<String> series() {
            return List.of(series);
        }

        @Override
        public void connect(int n) throws Exception {
            while (lanes.size() < n) {
                Lane lane = new Lane(load);
                new Bootstrap().group(group).channel(net.channelType).option(ChannelOption.TCP_NODELAY, true)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                        .handler(new ChannelInitializer<Channel>() {
                            @Override
                            protected void initChannel(Channel ch) {
                                ch.pipeline().addLast(frames(), lane);
                            }
                        })
                        .connect(server).sync();
                lanes.add(lane);
            }
        }

        @Override
        public CompletableFuture<Load> run(int mode, Result.Case c, long nanos, boolean record) {
            CompletableFuture<Load> f = new CompletableFuture<>();
            group.next().execute(() -> {
                load.begin(record, nanos, c.connections()).whenComplete((l, e) -> {
                    if (e != null) f.completeExceptionally(e); else f.complete(l);
                });
                for (int i = 0; i < c.connections(); i++) {
                    lanes.get(i).start(c.bytes(), c.window());
                }
            });
            return f;
        }

        @Override
        public long serverCpu(boolean stop) throws Exception {
            return ask(stop ? Wire.STOP : Wire.CPU);
        }

        @Override
        public long serverJit() throws Exception {
            return ask(Wire.JIT);
        }

        private long ask(int op) throws Exception {
            Lane first = lanes.getFirst();
            CompletableFuture<Long> f = new CompletableFuture<>();
            group.next().execute(() -> first.control(op, f));
            return f.get(30, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws Exception {
            for (Lane l : lanes) {
                if (l.ctx != null) {
                    l.ctx.close().await(10, TimeUnit.SECONDS);
                }
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    /** One connection's requests, on the client's event loop. */
    static final class Lane extends ChannelInboundHandlerAdapter {
        private final Load load;
        private final Load.Lane lane = new Load.Lane(Load.MAX_OUTSTANDING);
        private ChannelHandlerContext ctx;
        private int size;
        private boolean wrote;
        private CompletableFuture<Long> control;

        Lane(Load load) {
            this.load = load;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext c) {
            ctx = c;
        }

        void start(int bytes, int window) {
            size = bytes;
            load.enter(lane);
            for (int i = 0; i < window; i++) {
                issue();
            }
            ctx.flush();
            wrote = false;
        }

        void control(int op, CompletableFuture<Long> f) {
            control = f;
            ctx.writeAndFlush(ctx.alloc().directBuffer(8).writeInt(4).writeInt(op));
        }

        private void issue() {
            ByteBuf b = ctx.alloc().directBuffer(size);
            b.writeInt(size - 4).writeInt(Wire.ECHO).writerIndex(size);
            load.issued(lane, System.nanoTime());
            ctx.write(b, ctx.voidPromise());
            wrote = true;
        }

        @Override
        public void channelRead(ChannelHandlerContext c, Object msg) {
            long now = System.nanoTime();
            ByteBuf f = (ByteBuf) msg;
            int op = f.getInt(f.readerIndex() + 4);
            int len = f.readableBytes();
            long value = op != Wire.ECHO && len >= 16 ? f.getLong(f.readerIndex() + 8) : 0;
            f.release();
            if (op != Wire.ECHO) {
                if (control != null) {
                    control.complete(value);
                }
            } else if (len != size) {
                load.fail(new IllegalStateException("a reply of " + len + " B to a request of " + size + " B"));
            } else if (load.reply(lane, now)) {
                issue();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext c) {
            if (wrote) {
                wrote = false;
                c.flush();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext c) {
            load.fail(new IllegalStateException(c.channel() + " closed"));
            if (control != null) {
                control.completeExceptionally(new IllegalStateException(c.channel() + " closed"));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
            load.fail(cause);
            c.close();
        }
    }
}
