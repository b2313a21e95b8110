package org.rdmapanama.channel;

import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.rdmapanama.channel.ChannelDeviceTest.SECONDS;
import static org.rdmapanama.channel.ChannelDeviceTest.bytes;
import static org.rdmapanama.channel.ChannelDeviceTest.group;
import static org.rdmapanama.channel.ChannelDeviceTest.pattern;
import static org.rdmapanama.channel.ChannelDeviceTest.send;
import static org.rdmapanama.channel.ChannelDeviceTest.sizeOf;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Channels whose queue pairs share their loop's receive queue, on each lab
 * transport: echo over several channels at every size, streams far ahead of
 * a receiver that gives slots back late (rnr_retry is 0: a credit without a
 * posted receive behind it would fail a QP), the SRQ's capacity refused
 * clearly, and nothing left behind: a second round of channels registers no
 * more memory than the first.
 */
@Tag("device")
class ChannelSharedReceivesDeviceTest {
    static ChannelOptions options() {
        return ChannelOptions.defaults().withWindow(6).withSharedReceives(8 * 16).withSendQueueLimit(4096);
    }

    @OnEveryLabTransport
    void echoesEverySizeOnSixChannelsThreeTimes(Transport t) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        ChannelOptions o = options();
        try (ChannelGroup server = group(t, o); ChannelServer s = ChannelDeviceTest.echo(server, port);
             ChannelGroup client = group(t, o)) {
            long[] registered = new long[3];
            for (int round = 0; round < 3; round++) {
                // rendezvous buffers come back when DONE does, so how many the pool needs at once varies:
                // only the first round has them, the others compare the slots' memory
                echoRound(client, new InetSocketAddress(server.address(), port), o, 6, round == 0);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
                while ((client.channelCount() > 0 || server.channelCount() > 0) && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(0, client.channelCount(), "client channels after round " + round);
                assertEquals(0, server.channelCount(), "server channels after round " + round);
                registered[round] = client.registeredBytes() + server.registeredBytes();
            }
            assertEquals(registered[1], registered[2], "the third round registered more memory: a slot leaked");
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "every verbs object freed");
    }

    private static void echoRound(ChannelGroup client, InetSocketAddress server, ChannelOptions o, int n,
                                  boolean rendezvous) throws Exception {
        List<BlockingQueue<byte[]>> replies = new ArrayList<>();
        List<MessageChannel> channels = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            BlockingQueue<byte[]> q = new ArrayBlockingQueue<>(64);
            replies.add(q);
            channels.add(client.connect(server, (ch, m) -> {
                q.add(bytes(m));
                m.release();
            }).get(SECONDS, TimeUnit.SECONDS));
        }
        int[] sizes = rendezvous ? new int[] {0, 1, 16, 1000, o.eagerLimit(), o.eagerLimit() + 1, 65536, 1 << 20}
                : new int[] {0, 1, 16, 1000, o.eagerLimit()};
        for (int size : sizes) {
            for (int c = 0; c < n; c++) { // every channel at once: their receives interleave in the SRQ
                send(channels.get(c), pattern(size, size + c));
            }
            for (int c = 0; c < n; c++) {
                assertArrayEquals(pattern(size, size + c), replies.get(c).poll(SECONDS, TimeUnit.SECONDS),
                        size + " B on channel " + c);
            }
        }
        for (MessageChannel ch : channels) {
            ch.close();
        }
        for (MessageChannel ch : channels) {
            ch.closeFuture().get(SECONDS, TimeUnit.SECONDS);
            assertTrue(!ch.isOpen());
        }
    }

    /** Four streams of 20 windows each, mixed eager and rendezvous, released late by another thread. */
    @OnEveryLabTransport
    void streamsFarAheadOfALateReceiver(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = options();
        int count = 20 * o.window();
        int streams = 4;
        BlockingQueue<Message> toRelease = new LinkedBlockingQueue<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        int[] finished = {0};
        Thread releaser = Thread.ofPlatform().daemon(true).start(() -> {
            try {
                while (!done.isDone()) {
                    Message m = toRelease.poll(10, TimeUnit.MILLISECONDS);
                    if (m != null) {
                        Thread.sleep(0, 200_000); // late: the senders run out of credits
                        m.release();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o);
             ChannelServer s = server.listen(port, new MessageHandler() {
                 @Override
                 public void onOpen(MessageChannel ch) {
                     ch.attach(new int[1]);
                 }

                 @Override
                 public void onMessage(MessageChannel ch, Message m) {
                     int[] next = (int[]) ch.attachment();
                     int seq = m.segment().get(JAVA_INT_UNALIGNED, 0);
                     if (seq != next[0] || m.length() != sizeOf(seq, o)) {
                         done.completeExceptionally(new AssertionError("message " + seq + " of " + m.length()
                                 + " B arrived as number " + next[0]));
                     }
                     if (++next[0] == count && ++finished[0] == streams) {
                         done.complete(null);
                     }
                     toRelease.add(m);
                 }
             })) {
            List<MessageChannel> channels = new ArrayList<>();
            for (int c = 0; c < streams; c++) {
                channels.add(client.connect(new InetSocketAddress(server.address(), port), (ch, m) -> m.release())
                        .get(SECONDS, TimeUnit.SECONDS));
            }
            for (int i = 0; i < count; i++) {
                for (MessageChannel ch : channels) {
                    int size = sizeOf(i, o);
                    MessageBuffer b = ch.allocate(size);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, i);
                    ch.send(b, size);
                }
            }
            done.get(2L * SECONDS, TimeUnit.SECONDS);
            for (MessageChannel ch : channels) {
                ch.close();
                ch.closeFuture().get(SECONDS, TimeUnit.SECONDS);
            }
        } finally {
            done.complete(null);
            releaser.join();
        }
    }

    /** A loop whose SRQ has room for one channel refuses the second, and says what to raise. */
    @OnEveryLabTransport
    void aFullSharedReceiveQueueRefusesClearly(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults().withWindow(4).withSharedReceives(6);
        try (ChannelGroup server = group(t, options()); ChannelServer s = ChannelDeviceTest.echo(server, port);
             ChannelGroup client = group(t, o)) {
            var at = new InetSocketAddress(server.address(), port);
            MessageChannel first = client.connect(at, (ch, m) -> m.release()).get(SECONDS, TimeUnit.SECONDS);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> client.connect(at, (ch, m) -> m.release()).get(SECONDS, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("ChannelOptions.sharedReceives"), e.getCause().getMessage());
            first.close();
            first.closeFuture().get(SECONDS, TimeUnit.SECONDS);
        }
        assertInstanceOf(IllegalArgumentException.class, org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> ChannelOptions.defaults().withSharedReceives(10)));
    }
}
