package org.rdmapanama.channel;

import org.junit.jupiter.api.Tag;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Half-close: the side that shuts its output down has every message it sent delivered first (eager and
 * rendezvous), then the peer hears onInputShutdown; the peer still sends, the shut side still receives,
 * and a send after the shut is refused. Then a close ends both, gracefully.
 */
@Tag("device")
class ChannelShutdownDeviceTest {
    @OnEveryLabTransport
    void shutOutputDeliversWhatCameBeforeAndKeepsTheOtherWay(Transport t) throws Exception {
        ChannelOptions o = ChannelOptions.defaults();
        int port = LabPorts.next();
        int messages = 40;
        List<byte[]> got = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> shutAfter = new CompletableFuture<>();
        CompletableFuture<MessageChannel> serverSide = new CompletableFuture<>();
        try (ChannelGroup server = ChannelDeviceTest.group(t, o);
             ChannelServer s = server.listen(port, new MessageHandler() {
                 @Override
                 public void onOpen(MessageChannel ch) {
                     serverSide.complete(ch);
                 }

                 @Override
                 public void onMessage(MessageChannel ch, Message m) {
                     got.add(ChannelDeviceTest.bytes(m));
                     m.release();
                 }

                 @Override
                 public void onInputShutdown(MessageChannel ch) {
                     shutAfter.complete(got.size());
                 }
             });
             ChannelGroup client = ChannelDeviceTest.group(t, o)) {
            BlockingQueue<byte[]> replies = new LinkedBlockingQueue<>();
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> {
                replies.add(ChannelDeviceTest.bytes(m));
                m.release();
            }).get(30, TimeUnit.SECONDS);
            for (int i = 0; i < messages; i++) {
                // every fifth past the eager limit: the shut must wait for its rendezvous read
                int size = i % 5 == 4 ? o.eagerLimit() + 5000 : 100 + i;
                while (!ch.isWritable()) {
                    Thread.sleep(1);
                }
                ChannelDeviceTest.send(ch, ChannelDeviceTest.pattern(size, i));
            }
            ch.shutdownOutput();
            assertTrue(ch.isOutputShutdown());
            assertThrows(ClosedResourceException.class, () -> ChannelDeviceTest.send(ch, new byte[10]),
                    "a send after the shut");
            assertEquals(messages, shutAfter.get(30, TimeUnit.SECONDS), "the shut comes after every message");
            for (int i = 0; i < messages; i++) {
                int size = i % 5 == 4 ? o.eagerLimit() + 5000 : 100 + i;
                assertArrayEquals(ChannelDeviceTest.pattern(size, i), got.get(i), "message " + i);
            }
            MessageChannel peer = serverSide.get(30, TimeUnit.SECONDS);
            assertTrue(peer.isOpen() && ch.isOpen(), "a half-close leaves both open");
            byte[] reply = ChannelDeviceTest.pattern(o.eagerLimit() + 100, 99);
            ChannelDeviceTest.send(peer, reply);
            assertArrayEquals(reply, replies.poll(30, TimeUnit.SECONDS), "the shut side still receives");
            peer.close();
            peer.closeFuture().get(30, TimeUnit.SECONDS);
            ch.closeFuture().get(30, TimeUnit.SECONDS);
            assertFalse(ch.isOpen());
        }
    }
}
