package org.rdmapanama.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer process killed (SIGKILL) while connected: the server's child goes inactive, as a TCP channel does
 * on a reset, and the kernel's RDMA objects go back to what the server alone holds.
 */
@Tag("device")
class RdmaPeerDeathDeviceTest {
    private static final int SECONDS = 60;

    @OnEveryLabTransport
    void aKilledPeersChannelGoesInactive(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
            Process peer = null;
            try {
                CompletableFuture<String> hello = new CompletableFuture<>();
                CompletableFuture<Long> inactiveAt = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ByteBuf b = (ByteBuf) msg;
                                hello.complete(b.toString(StandardCharsets.US_ASCII));
                                b.release();
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                // a reset's exception, as TCP's: the close follows
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                inactiveAt.complete(System.nanoTime());
                            }
                        })
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                Map<String, Integer> serverAlone = LeakCheck.counts();
                InetSocketAddress at = (InetSocketAddress) server.localAddress();
                String java = ProcessHandle.current().info().command().orElse("java");
                // C1 only and serial GC: the peer's start is most of this test's time under the lab's emulation.
                peer = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED",
                        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                        "-cp", System.getProperty("java.class.path"), DyingPeer.class.getName(), t.name(),
                        at.getAddress().getHostAddress(), Integer.toString(at.getPort())))
                        .redirectErrorStream(true).start();
                BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                        StandardCharsets.UTF_8));
                StringBuilder said = new StringBuilder();
                CompletableFuture<Void> connected = CompletableFuture.runAsync(() -> {
                    try {
                        for (String line; (line = out.readLine()) != null; ) {
                            said.append(line).append('\n');
                            if (line.equals("connected")) {
                                return;
                            }
                        }
                        throw new IllegalStateException("the peer ended before it connected:\n" + said);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                connected.get(SECONDS, TimeUnit.SECONDS);
                assertEquals("hello", hello.get(SECONDS, TimeUnit.SECONDS));
                long killedAt = System.nanoTime();
                peer.destroyForcibly();
                assertTrue(peer.waitFor(SECONDS, TimeUnit.SECONDS), "the peer is gone");
                long ms = TimeUnit.NANOSECONDS.toMillis(inactiveAt.get(SECONDS, TimeUnit.SECONDS) - killedAt);
                System.out.println(t + ": the killed peer's channel went inactive " + ms + " ms after the kill");
                // The connection's own objects; the loop's CQ and the pool's first chunk, made at the first
                // accept, stay the server's.
                Map<String, Integer> now = LeakCheck.counts();
                for (int i = 0; i < 50 && !(now.get("qp").equals(serverAlone.get("qp"))
                        && now.get("cm_id").equals(serverAlone.get("cm_id"))); i++) {
                    Thread.sleep(200);
                    now = LeakCheck.counts();
                }
                assertEquals(serverAlone.get("qp"), now.get("qp"), "QPs back to the server's own: " + now);
                assertEquals(serverAlone.get("cm_id"), now.get("cm_id"), "cm_ids back to the server's own: " + now);
                server.close().sync();
            } finally {
                if (peer != null) {
                    peer.destroyForcibly();
                }
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }
}
