package org.rdmapanama.channel;

import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.SendRequest;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer written on raw verbs connects to a channel server as a channel
 * would, then sends one malformed message of each kind (and random bytes):
 * the server closes that channel with a {@link ProtocolException} naming
 * the field, and a well-behaved channel of the same server goes on.
 */
@Tag("device")
class ChannelMalformedPeerDeviceTest {
    static final Duration T = Duration.ofSeconds(30);

    record Case(String name, String expected, Consumer<MemorySegment> write, int bytes) {}

    static List<Case> cases(ChannelOptions o) {
        List<Case> c = new ArrayList<>();
        c.add(new Case("short", "shorter than the 16-byte header", s -> Wire.header(s, Wire.DATA, 0, 0, 0), 8));
        c.add(new Case("magic", "magic 0x4242", s -> {
            Wire.header(s, Wire.DATA, 0, 4, 0);
            s.set(Wire.U16, 0, (short) 0x4242);
        }, 20));
        c.add(new Case("version", "version 9", s -> {
            Wire.header(s, Wire.DATA, 0, 4, 0);
            s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 2, (byte) 9);
        }, 20));
        c.add(new Case("type", "unknown message type 77", s -> Wire.header(s, 77, 0, 0, 0), 16));
        c.add(new Case("flags", "header flags 0x4 have unknown bits", s -> {
            Wire.header(s, Wire.DATA, 0, 4, 0);
            s.set(Wire.U16, 6, (short) 4);
        }, 20));
        c.add(new Case("data length", "DATA message of 20 bytes, expected 116",
                s -> Wire.header(s, Wire.DATA, 0, 100, 0), 20));
        c.add(new Case("data beyond slot", "does not fit a " + o.slotSize() + "-byte slot",
                s -> Wire.header(s, Wire.DATA, 0, o.slotSize(), 0), 16));
        c.add(new Case("credits", "credits 60000 would give", s -> Wire.header(s, Wire.CREDIT, 60000, 0, 0), 16));
        c.add(new Case("rendezvous region", "RNDV names region 0, and the peer advertised 0", s -> {
            Wire.header(s, Wire.RNDV, 0, o.eagerLimit() + 100, 0);
            s.set(Wire.U64, 16, 0x1000L);
            s.set(Wire.U32, 24, 0x1234);
            s.set(Wire.U32, 28, 0);
        }, 32));
        c.add(new Case("rendezvous length", "RNDV length", s -> {
            Wire.header(s, Wire.RNDV, 0, o.maxMessageSize() + 1, 0);
            s.set(Wire.U64, 16, 0x1000L);
        }, 32));
        c.add(new Case("done token", "DONE for token 7", s -> Wire.header(s, Wire.DONE, 0, 0, 7), 16));
        c.add(new Case("advertise length", "ADVERTISE length is 3", s -> Wire.header(s, Wire.ADVERTISE, 0, 3, 0), 32));
        c.add(new Case("answer", "an ANSWER to no REQUEST", s -> {
            Wire.header(s, Wire.CREDIT, 0, 0, 0);
            Wire.flags(s, Wire.FLAG_ANSWER);
        }, 16));
        c.add(new Case("flags on data", "only a CREDIT carries them", s -> {
            Wire.header(s, Wire.DATA, 0, 4, 0);
            Wire.flags(s, Wire.FLAG_REQUEST);
        }, 20));
        c.add(new Case("random bytes", "", s -> {
            byte[] r = new byte[64];
            new Random(7).nextBytes(r);
            MemorySegment.copy(r, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, r.length);
        }, 64));
        return c;
    }

    @OnEveryLabTransport
    void everyMalformedMessageClosesOnlyItsChannel(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults();
        BlockingQueue<Throwable> closes = new LinkedBlockingQueue<>();
        try (ChannelGroup server = ChannelDeviceTest.group(t, o);
             ChannelServer s = server.listen(port, new MessageHandler() {
                 @Override
                 public void onMessage(MessageChannel ch, Message m) throws Exception {
                     ChannelDeviceTest.echo(ch, m);
                 }

                 @Override
                 public void onClose(MessageChannel ch, Throwable cause) {
                     closes.add(cause == null ? new AssertionError("closed without a cause") : cause);
                 }
             });
             ChannelGroup client = ChannelDeviceTest.group(t, o)) {
            InetSocketAddress at = new InetSocketAddress(server.address(), port);
            BlockingQueue<byte[]> replies = new ArrayBlockingQueue<>(4);
            MessageChannel good = client.connect(at, (c, m) -> {
                replies.add(ChannelDeviceTest.bytes(m));
                m.release();
            }).get(30, TimeUnit.SECONDS);
            for (Case c : cases(o)) {
                try (RdmaConnection raw = RdmaConnection.resolve(at, new InetSocketAddress(server.address(), 0),
                        ConnectionOptions.defaults(), T);
                     SendRequest wr = raw.queuePair().newSendRequest(1, 1);
                     CompletionBatch done = new CompletionBatch(4)) {
                    MemoryRegion mr = raw.protectionDomain().allocate(4096);
                    c.write().accept(mr.segment());
                    raw.connect(Wire.privateData(o.window() + 1, o.slotSize(), o.maxMessageSize()), T);
                    raw.queuePair().postSend(wr.sge(mr, 0, c.bytes()).signaled(0, true));
                    assertEquals(1, raw.completionQueue().pollUntil(done, T));
                    Throwable cause = closes.poll(30, TimeUnit.SECONDS);
                    assertNotNull(cause, c.name() + ": the server closed nothing");
                    assertTrue(cause instanceof ProtocolException && cause.getMessage().contains(c.expected()),
                            c.name() + ": " + cause);
                    assertTrue(raw.awaitDisconnect(T), c.name() + ": the raw peer was disconnected");
                }
                byte[] ping = ChannelDeviceTest.pattern(100, c.name().length());
                ChannelDeviceTest.send(good, ping);
                assertArrayEquals(ping, replies.poll(30, TimeUnit.SECONDS), "the good channel goes on after " + c.name());
            }
            good.close();
            good.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
