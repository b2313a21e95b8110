package org.rdmapanama.channel;

import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdmapanama.channel.ChannelDeviceTest.SECONDS;
import static org.rdmapanama.channel.ChannelDeviceTest.bytes;
import static org.rdmapanama.channel.ChannelDeviceTest.group;
import static org.rdmapanama.channel.ChannelDeviceTest.pattern;
import static org.rdmapanama.channel.ChannelDeviceTest.send;

/**
 * Keepalive: an idle channel sends a CREDIT once an interval on each side
 * (so that a silent peer or link would fail the send), costs its credits
 * nothing over time, sends none while it has traffic, and none when off.
 */
@Tag("device")
class ChannelKeepaliveDeviceTest {
    private static final long INTERVAL = TimeUnit.MILLISECONDS.toNanos(50);

    @OnEveryLabTransport
    void anIdleChannelKeepsItsPeerInformedAndItsCredits(Transport t) throws Exception {
        ChannelOptions o = ChannelOptions.defaults().withWindow(4).withKeepaliveNanos(INTERVAL);
        int port = LabPorts.next();
        CompletableFuture<MessageChannel> accepted = new CompletableFuture<>();
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o);
             ChannelServer s = server.listen(port, new MessageHandler() {
                 @Override
                 public void onOpen(MessageChannel ch) {
                     accepted.complete(ch);
                 }

                 @Override
                 public void onMessage(MessageChannel ch, Message m) throws Exception {
                     ChannelDeviceTest.echo(ch, m);
                 }
             })) {
            LinkedBlockingQueue<byte[]> replies = new LinkedBlockingQueue<>();
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> {
                replies.add(bytes(m));
                m.release();
            }).get(SECONDS, TimeUnit.SECONDS);
            MessageChannel peer = accepted.get(SECONDS, TimeUnit.SECONDS);
            Thread.sleep(1_000); // 20 intervals, idle
            long mine = keepalives(ch);
            long theirs = keepalives(peer);
            System.out.printf("%s: 1 s idle at a 50 ms keepalive: %d and %d keepalives%n", t, mine, theirs);
            assertTrue(mine >= 5 && theirs >= 5, "both idle ends keep alive: " + mine + ", " + theirs);
            assertTrue(ch.isOpen() && peer.isOpen(), "keepalives end nothing");
            // Four times the window afterwards: the keepalives' credits came back.
            for (int i = 0; i < 4 * o.window(); i++) {
                byte[] data = pattern(100, i);
                send(ch, data);
                byte[] got = replies.poll(SECONDS, TimeUnit.SECONDS);
                assertTrue(got != null, "echo " + i + " came");
                assertArrayEquals(data, got);
            }
            // Traffic posts every few ms at most: an interval without a post is a stall of the emulated
            // machine, rare, so far fewer keepalives than the 10 intervals (an idle second had 14-16 in 20).
            long before = keepalives(ch);
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
            int n = 0;
            while (System.nanoTime() < end) {
                send(ch, pattern(64, n++));
                assertTrue(replies.poll(SECONDS, TimeUnit.SECONDS) != null, "echo came");
            }
            long amid = keepalives(ch) - before;
            System.out.printf("%s: %d keepalives amid %d echoes in 500 ms%n", t, amid, n);
            assertTrue(amid <= 3, amid + " keepalives amid " + n + " echoes");
            ch.close();
            assertEquals(null, ch.closeFuture().get(SECONDS, TimeUnit.SECONDS));
        }
    }

    @OnEveryLabTransport
    void offByDefault(Transport t) throws Exception {
        int port = LabPorts.next();
        try (ChannelGroup server = group(t, ChannelOptions.defaults());
             ChannelGroup client = group(t, ChannelOptions.defaults());
             ChannelServer s = server.listen(port, ChannelDeviceTest::echo)) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> m.release())
                    .get(SECONDS, TimeUnit.SECONDS);
            Thread.sleep(300);
            assertEquals(0, keepalives(ch));
            ch.close();
            ch.closeFuture().get(SECONDS, TimeUnit.SECONDS);
        }
    }

    /** Read on the channel's loop thread, which alone writes it. */
    private static long keepalives(MessageChannel ch) throws Exception {
        CompletableFuture<Long> n = new CompletableFuture<>();
        ch.execute(() -> n.complete(ch.sender.keepalivesSent));
        return n.get(SECONDS, TimeUnit.SECONDS);
    }
}
