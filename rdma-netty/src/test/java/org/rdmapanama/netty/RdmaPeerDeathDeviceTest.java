package org.rdmapanama.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LeakCheck;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer process killed (SIGKILL) while connected, on every lab transport at once (one peer JVM, whose start
 * is most of the time under the lab's emulation): each server's child goes inactive, as a TCP channel does on
 * a reset, and the kernel's QPs and cm_ids go back to what the servers alone hold.
 */
@Tag("device")
class RdmaPeerDeathDeviceTest {
    private static final int SECONDS = 60;

    /** One transport's server and what its child saw. */
    private record Side(Transport transport, RdmaTransport rdma, EventLoopGroup loops, Channel server,
                        CompletableFuture<String> hello, CompletableFuture<Long> inactiveAt) {}

    @Test
    void aKilledPeersChannelsGoInactiveOnEveryTransport() throws Exception {
        List<Side> sides = new ArrayList<>();
        Process peer = null;
        try {
            List<String> command = new ArrayList<>(List.of(
                    ProcessHandle.current().info().command().orElse("java"), "--enable-native-access=ALL-UNNAMED",
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // it only connects: start it fast
                    "-cp", System.getProperty("java.class.path"), DyingPeer.class.getName()));
            for (Transport t : LabDevices.TRANSPORTS) {
                Side s = serve(t);
                sides.add(s);
                InetSocketAddress at = (InetSocketAddress) s.server().localAddress();
                command.addAll(List.of(t.name(), at.getAddress().getHostAddress(), Integer.toString(at.getPort())));
            }
            Map<String, Integer> serversAlone = LeakCheck.counts();
            peer = new ProcessBuilder(command).redirectErrorStream(true).start();
            awaitLine(peer, "connected");
            for (Side s : sides) {
                assertEquals("hello", s.hello().get(SECONDS, TimeUnit.SECONDS), s.transport() + ": the peer's write");
            }
            long killedAt = System.nanoTime();
            peer.destroyForcibly();
            assertTrue(peer.waitFor(SECONDS, TimeUnit.SECONDS), "the peer is gone");
            for (Side s : sides) {
                long ms = TimeUnit.NANOSECONDS.toMillis(s.inactiveAt().get(SECONDS, TimeUnit.SECONDS) - killedAt);
                System.out.println(s.transport() + ": the killed peer's channel went inactive " + ms + " ms after the kill");
            }
            // The connections' own objects; the loops' CQs and the pools' first chunks, made at the first accept,
            // stay the servers'.
            Map<String, Integer> now = LeakCheck.counts();
            for (int i = 0; i < 50 && !(now.get("qp").equals(serversAlone.get("qp"))
                    && now.get("cm_id").equals(serversAlone.get("cm_id"))); i++) {
                Thread.sleep(200);
                now = LeakCheck.counts();
            }
            assertEquals(serversAlone.get("qp"), now.get("qp"), "QPs back to the servers' own: " + now);
            assertEquals(serversAlone.get("cm_id"), now.get("cm_id"), "cm_ids back to the servers' own: " + now);
        } finally {
            if (peer != null) {
                peer.destroyForcibly();
            }
            for (Side s : sides) {
                s.server().close().await(SECONDS, TimeUnit.SECONDS);
                assertTrue(s.loops().shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
                s.rdma().close();
            }
        }
    }

    private static Side serve(Transport t) throws Exception {
        RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults());
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
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
        return new Side(t, rdma, loops, server, hello, inactiveAt);
    }

    private static void awaitLine(Process p, String wanted) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder said = new StringBuilder();
        CompletableFuture.runAsync(() -> {
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    said.append(line).append('\n');
                    if (line.equals(wanted)) {
                        return;
                    }
                }
                throw new IllegalStateException("the peer ended before it said " + wanted + ":\n" + said);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).get(SECONDS, TimeUnit.SECONDS);
    }
}
