package org.rdmapanama.channel;

import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Message channels between two groups in one JVM, on each lab transport:
 * every byte and the order checked, eager and rendezvous sizes, a sender
 * far ahead of a slow receiver (rnr_retry is 0: one missing receive would
 * fail the queue pair), graceful and abortive closes, and misuse.
 */
@Tag("device")
class ChannelDeviceTest {
    static final int SECONDS = 30;

    static ChannelGroup group(Transport t, ChannelOptions o) throws Exception {
        return ChannelGroup.open(LabDevices.config(t), o);
    }

    static byte[] pattern(int size, int seed) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    static void send(MessageChannel ch, byte[] data) throws Exception {
        MessageBuffer b = ch.allocate(data.length);
        MemorySegment.copy(data, 0, b.segment(), JAVA_BYTE, 0, data.length);
        ch.send(b, data.length);
    }

    static byte[] bytes(Message m) {
        return m.segment().asSlice(0, m.length()).toArray(JAVA_BYTE);
    }

    /** A server that echoes every message. */
    static ChannelServer echo(ChannelGroup g, int port) throws Exception {
        return g.listen(port, ChannelDeviceTest::echo);
    }

    static void echo(MessageChannel ch, Message m) throws Exception {
        MessageBuffer reply = ch.allocate(m.length());
        MemorySegment.copy(m.segment(), 0, reply.segment(), 0, m.length());
        ch.send(reply, m.length());
        m.release();
    }

    @OnEveryLabTransport
    void echoesEverySizeOnFourChannels(Transport t) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults();
        try (ChannelGroup server = group(t, o); ChannelServer s = echo(server, port);
             ChannelGroup client = group(t, o)) {
            BlockingQueue<byte[]> replies = new ArrayBlockingQueue<>(64);
            List<MessageChannel> channels = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                channels.add(client.connect(new InetSocketAddress(server.address(), port), (ch, m) -> {
                    replies.add(bytes(m));
                    m.release();
                }).get(SECONDS, TimeUnit.SECONDS));
            }
            int[] sizes = {0, 1, 16, 1000, o.eagerLimit(), o.eagerLimit() + 1, 65536, 1 << 20};
            for (int size : sizes) {
                for (int c = 0; c < channels.size(); c++) {
                    byte[] request = pattern(size, size + c);
                    send(channels.get(c), request);
                    assertArrayEquals(request, replies.poll(SECONDS, TimeUnit.SECONDS), size + " B on channel " + c);
                }
            }
            for (MessageChannel ch : channels) {
                ch.close();
                ch.closeFuture().get(SECONDS, TimeUnit.SECONDS);
                assertTrue(!ch.isOpen());
            }
            assertThrows(ClosedResourceException.class, () -> channels.get(0).send(channels.get(0).allocate(1), 1));
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "every verbs object freed");
    }

    /**
     * 20 windows of messages sent before the receiver gives any back, mixed
     * eager and rendezvous: all arrive once, in order, and the queue pair
     * (rnr_retry 0) never meets a missing receive.
     */
    @OnEveryLabTransport
    void aSenderFarAheadWaitsForCredits(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults().withWindow(8).withSendQueueLimit(4096);
        int count = 20 * o.window();
        List<Message> held = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> gotAll = new CompletableFuture<>();
        int[] next = {0};
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o);
             ChannelServer s = server.listen(port, (ch, m) -> {
                 int seq = m.segment().get(JAVA_INT_UNALIGNED, 0);
                 if (seq != next[0]) {
                     gotAll.completeExceptionally(new AssertionError("message " + seq + " arrived as number " + next[0]));
                 }
                 int size = m.length();
                 if (size != sizeOf(seq, o)) {
                     gotAll.completeExceptionally(new AssertionError("message " + seq + " has " + size + " bytes"));
                 }
                 next[0]++;
                 held.add(m);
                 if (next[0] == count) {
                     gotAll.complete(null);
                 }
             })) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> m.release())
                    .get(SECONDS, TimeUnit.SECONDS);
            for (int i = 0; i < count; i++) {
                int size = sizeOf(i, o);
                MessageBuffer b = ch.allocate(size);
                b.segment().set(JAVA_INT_UNALIGNED, 0, i);
                ch.send(b, size);
            }
            // The receiver holds everything: only a window's worth can have arrived.
            Thread.sleep(500);
            assertTrue(held.size() <= o.window() + 1, held.size() + " messages arrived with " + o.window() + " credits");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
            while (!gotAll.isDone()) {
                if (ch.closeFuture().isDone() || System.nanoTime() > deadline) {
                    fail("after " + next[0] + " of " + count + " messages: " + ch + ", " + ch.closeFuture());
                }
                for (Message m : held) {
                    held.remove(m);
                    m.release();
                }
                Thread.sleep(1);
            }
            gotAll.get();
            for (Message m : held) {
                m.release();
            }
            assertTrue(ch.isOpen(), "no receive was ever missing");
            ch.close();
            assertNull(ch.closeFuture().get(SECONDS, TimeUnit.SECONDS));
        }
    }

    /**
     * A one-way stream whose receiver answers only at its end: the receiver
     * spent credits on CREDIT messages that nothing carried back, and its
     * REQUEST gets them, so the answer goes (it once waited forever).
     */
    @OnEveryLabTransport
    void aStreamsReceiverCanAnswerAtItsEnd(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults().withWindow(4);
        int[] counted = {0};
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o);
             ChannelServer s = server.listen(port, (ch, m) -> {
                 boolean last = m.segment().get(JAVA_INT_UNALIGNED, 0) == -1;
                 m.release();
                 if (last) {
                     MessageBuffer b = ch.allocate(4);
                     b.segment().set(JAVA_INT_UNALIGNED, 0, counted[0]);
                     ch.send(b, 4);
                 } else {
                     counted[0]++;
                 }
             })) {
            BlockingQueue<Integer> answers = new ArrayBlockingQueue<>(4);
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> {
                answers.add(m.segment().get(JAVA_INT_UNALIGNED, 0));
                m.release();
            }).get(SECONDS, TimeUnit.SECONDS);
            for (int round = 1; round <= 3; round++) {
                int n = 200 * round;
                for (int i = 0; i < n; i++) {
                    while (!ch.isWritable() && ch.isOpen()) {
                        Thread.onSpinWait();
                    }
                    MessageBuffer b = ch.allocate(64);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, i);
                    ch.send(b, 64);
                }
                MessageBuffer end = ch.allocate(4);
                end.segment().set(JAVA_INT_UNALIGNED, 0, -1);
                ch.send(end, 4);
                Integer got = answers.poll(SECONDS, TimeUnit.SECONDS);
                assertTrue(got != null, "round " + round + ": the answer came");
            }
            ch.close();
            assertNull(ch.closeFuture().get(SECONDS, TimeUnit.SECONDS));
        }
    }

    static int sizeOf(int seq, ChannelOptions o) {
        return seq % 5 == 4 ? o.eagerLimit() + 1 + seq : 4 + seq % 100;
    }

    @OnEveryLabTransport
    void anAbortReachesThePeerWithACause(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults();
        CompletableFuture<Throwable> serverSaw = new CompletableFuture<>();
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o);
             ChannelServer s = server.listen(port, new MessageHandler() {
                 @Override
                 public void onMessage(MessageChannel ch, Message m) {
                     m.release();
                 }

                 @Override
                 public void onClose(MessageChannel ch, Throwable cause) {
                     serverSaw.complete(cause);
                 }
             })) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> m.release())
                    .get(SECONDS, TimeUnit.SECONDS);
            send(ch, pattern(100, 1));
            long start = System.nanoTime();
            ch.abort(new IllegalStateException("test abort"));
            Throwable cause = serverSaw.get(SECONDS, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(cause != null && cause.getMessage().contains("without closing"), String.valueOf(cause));
            // The 1 s is a target, measured and reported, not asserted: CI saw 1,548 ms on siw0 once.
            System.out.printf("CHANNEL %s: the peer noticed an abort after %d ms%n", t, ms);
            assertThrows(Exception.class, () -> ch.closeFuture().get(SECONDS, TimeUnit.SECONDS));
        }
    }

    @OnEveryLabTransport
    void misuseIsRefusedClearly(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults();
        try (ChannelGroup server = group(t, o); ChannelServer s = echo(server, port); ChannelGroup client = group(t, o)) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> m.release())
                    .get(SECONDS, TimeUnit.SECONDS);
            MessageBuffer b = ch.allocate(10);
            assertThrows(IllegalArgumentException.class, () -> ch.send(b, b.capacity() + 1));
            ch.send(b, 10);
            assertThrows(IllegalStateException.class, () -> ch.send(b, 10), "sent twice");
            assertThrows(IllegalStateException.class, b::segment, "used after send");
            assertThrows(IllegalArgumentException.class, () -> ch.allocate(o.maxMessageSize() + 1));
            MessageBuffer r = ch.allocate(10);
            r.release();
            assertThrows(IllegalStateException.class, r::release);
            ch.close();
            ch.closeFuture().get(SECONDS, TimeUnit.SECONDS);
        }
    }
}
