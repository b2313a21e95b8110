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
 * A reader that holds more large (rendezvous) messages than the window, unreleased: the channel stays open
 * (it was overrun once: "RNDV beyond the 32 outstanding", the receiver counting held messages where the
 * sender counted those not read yet) and every message arrives, in order. Held messages hold pool memory,
 * as held ByteBufs do; the window bounds only the reads in flight.
 */
@Tag("device")
class ChannelHeldRendezvousDeviceTest {
    @OnEveryLabTransport
    void aReaderHoldingMoreLargeMessagesThanTheWindowIsNotOverrun(Transport t) throws Exception {
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
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (held.size() < messages && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertEquals(messages, held.size(), "every message arrived, while the reader holds them all");
            assertTrue(ch.isOpen(), "the channel is still open");
            for (int i = 0; i < messages; i++) {
                assertArrayEquals(ChannelDeviceTest.pattern(size, i), ChannelDeviceTest.bytes(held.get(i)), "message " + i);
                held.get(i).release();
            }
            assertTrue(ch.isOpen(), "and the channel is open");
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
