package org.rdmapanama.channel;

import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdmapanama.channel.ChannelDeviceTest.SECONDS;
import static org.rdmapanama.channel.ChannelDeviceTest.bytes;
import static org.rdmapanama.channel.ChannelDeviceTest.group;
import static org.rdmapanama.channel.ChannelDeviceTest.pattern;
import static org.rdmapanama.channel.ChannelDeviceTest.send;

/**
 * Channels on loops that a caller's threads turn, as a framework with its own
 * event loops does: a group without loops of its own, a server whose acceptor
 * puts each channel on a loop of its choice, echoes across the eager limit,
 * closes on the loops' threads, and nothing left over.
 */
@Tag("device")
class DrivenLoopDeviceTest {

    /** A thread that turns a driven loop as an event loop would: passes while there is work, else sleeps. */
    static final class Driver implements AutoCloseable {
        final DrivenLoop loop;
        private final Thread thread;
        private volatile boolean stop;
        final CompletableFuture<Void> closed = new CompletableFuture<>();

        Driver(DrivenLoop loop, String name) {
            this.loop = loop;
            this.thread = Thread.ofPlatform().name(name).daemon(true).start(this::run);
        }

        private void run() {
            try {
                loop.attach();
                while (!stop) {
                    if (loop.runOnce() == 0 && loop.armSleep()) {
                        loop.sleep(TimeUnit.MILLISECONDS.toNanos(100));
                    }
                }
                loop.close();
                closed.complete(null);
            } catch (Throwable t) {
                closed.completeExceptionally(t);
            }
        }

        @Override
        public void close() throws Exception {
            stop = true;
            loop.wakeup();
            closed.get(SECONDS, TimeUnit.SECONDS);
            thread.join();
        }
    }

    @OnEveryLabTransport
    void channelsRunOnTheLoopsTheirCallersTurn(Transport t) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults().withLoops(0).withBusyPollNanos(0);
        int[] sizes = {1, 100, o.eagerLimit(), o.eagerLimit() + 1, 100_000};
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o)) {
            assertThrows(IllegalStateException.class, () -> server.listen(port, (ch, m) -> m.release()),
                    "a group without loops has nothing to accept on by itself");
            try (Driver serverLoop = new Driver(server.newDrivenLoop(), "driven-server");
                 Driver clientLoop = new Driver(client.newDrivenLoop(), "driven-client")) {
                CompletableFuture<Thread> handlerThread = new CompletableFuture<>();
                ChannelServer s = server.listen(new InetSocketAddress(server.address(), port),
                        request -> request.accept(serverLoop.loop, (ch, m) -> {
                            handlerThread.complete(Thread.currentThread());
                            ChannelDeviceTest.echo(ch, m);
                        }));
                LinkedBlockingQueue<byte[]> replies = new LinkedBlockingQueue<>();
                MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> {
                    replies.add(bytes(m));
                    m.release();
                }, clientLoop.loop).get(SECONDS, TimeUnit.SECONDS);
                assertTrue(clientLoop.loop.channelCount() == 1, "the channel is on the loop it was asked for");
                for (int round = 0; round < 3; round++) {
                    for (int size : sizes) {
                        byte[] data = pattern(size, round);
                        send(ch, data);
                        byte[] got = replies.poll(SECONDS, TimeUnit.SECONDS);
                        assertTrue(got != null, size + " B: the echo came");
                        assertArrayEquals(data, got, size + " B echoed");
                    }
                }
                assertEquals("driven-server", handlerThread.get(SECONDS, TimeUnit.SECONDS).getName(),
                        "the accepted channel's handler runs on the thread that turns its loop");
                assertThrows(IllegalStateException.class, () -> clientLoop.loop.close(),
                        "a loop a thread turns is closed on that thread");
                ch.close();
                assertEquals(null, ch.closeFuture().get(SECONDS, TimeUnit.SECONDS));
                s.close();
            }
        }
        ChannelGroup closed = group(t, ChannelOptions.defaults().withLoops(0));
        closed.close();
        assertThrows(ClosedResourceException.class, closed::newDrivenLoop);
        assertEquals(before, LeakCheck.awaitCounts(before), "every verbs object freed");
    }

    /** A channel left open when its loop closes is closed with it. */
    @OnEveryLabTransport
    void closingALoopClosesItsChannels(Transport t) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults().withLoops(0).withBusyPollNanos(0);
        try (ChannelGroup server = group(t, o); ChannelGroup client = group(t, o)) {
            Driver serverLoop = new Driver(server.newDrivenLoop(), "driven-server");
            Driver clientLoop = new Driver(client.newDrivenLoop(), "driven-client");
            CompletableFuture<MessageChannel> accepted = new CompletableFuture<>();
            ChannelServer s = server.listen(new InetSocketAddress(server.address(), port),
                    request -> request.accept(serverLoop.loop, ChannelDeviceTest::echo).whenComplete((c, e) -> {
                        if (e != null) {
                            accepted.completeExceptionally(e);
                        } else {
                            accepted.complete(c);
                        }
                    }));
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> m.release(),
                    clientLoop.loop).get(SECONDS, TimeUnit.SECONDS);
            MessageChannel peer = accepted.get(SECONDS, TimeUnit.SECONDS);
            clientLoop.close();
            Throwable cause = assertThrows(Exception.class, () -> ch.closeFuture().get(SECONDS, TimeUnit.SECONDS));
            assertTrue(String.valueOf(cause.getCause()).contains("was closed"), "the loop's close is the cause: " + cause);
            assertThrows(Exception.class, () -> peer.closeFuture().get(SECONDS, TimeUnit.SECONDS),
                    "the peer learns it");
            s.close();
            serverLoop.close();
            assertEquals(0, server.channelCount());
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "every verbs object freed");
    }
}
