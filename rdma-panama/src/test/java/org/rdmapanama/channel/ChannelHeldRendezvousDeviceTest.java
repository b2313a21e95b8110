package org.rdmapanama.channel;

import org.junit.jupiter.api.Tag;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A reader that holds more large (rendezvous) messages than the window, unreleased: its sender waits, the
 * channel stays open (it was overrun once: "RNDV beyond the 32 outstanding"), and after the release every
 * message arrives, in order.
 */
@Tag("device")
class ChannelHeldRendezvousDeviceTest {
    @OnEveryLabTransport
    void aReaderHoldingLargeMessagesSlowsItsSender(Transport t) throws Exception {
        ChannelOptions o = ChannelOptions.defaults();
        int port = LabPorts.next();
        int messages = o.window() + 8;
        int size = o.eagerLimit() + 1000;
        List<Message> held = new CopyOnWriteArrayList<>();
        try (ChannelGroup server = ChannelDeviceTest.group(t, o);
             ChannelServer s = server.listen(port, (ch, m) -> held.add(m));
             ChannelGroup client = ChannelDeviceTest.group(t, o)) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> m.release())
                    .get(30, TimeUnit.SECONDS);
            for (int i = 0; i < messages; i++) {
                ChannelDeviceTest.send(ch, ChannelDeviceTest.pattern(size, i));
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (held.isEmpty() && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            Thread.sleep(3000); // time for the rest to overrun the reader, were the sender not held back
            assertTrue(held.size() <= o.window(), "the reader holds at most a window's worth: " + held.size());
            assertTrue(ch.isOpen(), "the channel is still open");
            for (int done = 0; done < messages; ) {
                Message m = held.get(done);
                assertArrayEquals(ChannelDeviceTest.pattern(size, done), ChannelDeviceTest.bytes(m), "message " + done);
                m.release();
                done++;
                until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (done < messages && held.size() <= done && System.nanoTime() < until) {
                    Thread.sleep(5);
                }
            }
            assertEquals(messages, held.size(), "every message arrived after the release");
            assertTrue(ch.isOpen(), "and the channel is open");
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
