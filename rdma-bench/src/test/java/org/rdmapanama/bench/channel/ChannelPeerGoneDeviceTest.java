package org.rdmapanama.bench.channel;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.PeerJvm;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.channel.MessageHandler;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client process killed with SIGKILL while it exchanges messages: the server's channel (in this JVM) fails
 * with a cause that says the peer went away, the server's other work goes on, and once the group is closed
 * {@code rdma res show} is back at its counts from before. The victim is {@code rdma-bench channel_lat} in a
 * JVM of its own, so that its death closes its rdma_cm ids and queue pairs as a crash does. A new channel
 * to the same server is then echoed. How long the
 * server took to notice is printed, not asserted (tests check correctness, not timings).
 */
@Tag("device")
class ChannelPeerGoneDeviceTest {
    @OnEveryLabTransport
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aKilledClientFailsItsChannelWithACause(Transport transport) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        CountDownLatch echoed = new CountDownLatch(100);
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        long[] endedAt = {0};
        MessageHandler echo = new MessageHandler() {
            @Override
            public void onMessage(MessageChannel ch, Message m) throws Exception {
                int length = m.length();
                MessageBuffer reply = ch.allocate(length);
                reply.segment().set(JAVA_INT_UNALIGNED, 0, m.segment().get(JAVA_INT_UNALIGNED, 0));
                m.release();
                ch.send(reply, length);
                echoed.countDown();
            }

            @Override
            public void onClose(MessageChannel ch, Throwable cause) {
                endedAt[0] = System.nanoTime();
                ended.complete(cause);
            }
        };
        ByteArrayOutputStream victimOut = new ByteArrayOutputStream();
        Process victim = null;
        try (ChannelGroup group = ChannelGroup.open(LabDevices.config(transport), ChannelOptions.defaults());
             ChannelServer server = group.listen(port, echo)) {
            String dev = group.selection().device().name();
            victim = PeerJvm.start(List.of("channel_lat", "-d", dev, "-p", Integer.toString(port), "-s", "64",
                    "-n", "100000000", LabSelection.address(group.selection())), victimOut);
            assertTrue(echoed.await(150, TimeUnit.SECONDS), "the client never got going: " + victimOut);
            assertTrue(victim.isAlive(), "the client ended before it was killed: " + victimOut);
            long killedAt = System.nanoTime();
            victim.destroyForcibly();
            assertTrue(victim.waitFor(60, TimeUnit.SECONDS), "the killed client did not exit");
            long exitedAt = System.nanoTime();
            Throwable cause = ended.get(30, TimeUnit.SECONDS);
            System.out.printf("%s: the server's channel failed %d ms after the kill (%d ms after the client's"
                    + " exit was seen): %s%n", transport, (endedAt[0] - killedAt) / 1_000_000,
                    (endedAt[0] - exitedAt) / 1_000_000, cause);
            assertNotNull(cause, "a channel whose peer was killed must end with a cause, not as a graceful close");
            String text = String.valueOf(cause.getMessage());
            assertTrue(text.contains("peer") || text.contains("disconnect"), "the cause does not say the peer went: "
                    + cause);
            // The server goes on: a new channel from this JVM is echoed.
            try (ChannelGroup client = ChannelGroup.open(LabDevices.config(transport), ChannelOptions.defaults())) {
                CompletableFuture<Integer> reply = new CompletableFuture<>();
                MessageChannel ch = client.connect(new InetSocketAddress(LabSelection.address(group.selection()), port),
                        (c, m) -> {
                            reply.complete(m.length());
                            m.release();
                        }).get(60, TimeUnit.SECONDS);
                MessageBuffer b = ch.allocate(64);
                b.segment().set(JAVA_INT_UNALIGNED, 0, 1);
                ch.send(b, 64);
                assertEquals(64, reply.get(60, TimeUnit.SECONDS));
                ch.close();
                ch.closeFuture().get(60, TimeUnit.SECONDS);
            }
        } finally {
            if (victim != null) {
                victim.destroyForcibly();
            }
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after the group closed; the client said: "
                + victimOut.toString(StandardCharsets.UTF_8));
    }
}
