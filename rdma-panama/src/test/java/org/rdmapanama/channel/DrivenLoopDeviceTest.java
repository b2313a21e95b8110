package org.rdmapanama.channel;

import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
                CompletableFuture<MessageChannel> accepted = new CompletableFuture<>();
                Set<Object> wrappers = ConcurrentHashMap.newKeySet();
                ChannelServer s = server.listen(new InetSocketAddress(server.address(), 0),
                        request -> request.accept(serverLoop.loop, (ch, m) -> {
                            handlerThread.complete(Thread.currentThread());
                            if (m.attachment() == null) {
                                m.attach(new Object()); // what a framework would wrap the message in, once
                            }
                            wrappers.add(m.attachment());
                            ChannelDeviceTest.echo(ch, m);
                        }).thenAccept(accepted::complete));
                assertTrue(s.address().getPort() != 0, "port 0 binds a port, and the server says which: " + s.address());
                LinkedBlockingQueue<byte[]> replies = new LinkedBlockingQueue<>();
                MessageChannel ch = client.connect(s.address(), (c, m) -> {
                    replies.add(bytes(m));
                    m.release();
                }, clientLoop.loop, Duration.ofSeconds(SECONDS)).get(SECONDS, TimeUnit.SECONDS);
                assertTrue(clientLoop.loop.channelCount() == 1, "the channel is on the loop it was asked for");
                MessageChannel peer = accepted.get(SECONDS, TimeUnit.SECONDS);
                assertEquals(s.address(), peer.connection().localAddress(), "the accepted end's address");
                assertEquals(ch.connection().localAddress(), peer.connection().peerAddress(), "each end's address");
                assertEquals(peer.connection().localAddress(), ch.connection().peerAddress());
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
                assertTrue(wrappers.size() <= o.window() + 2, wrappers.size() + " attachments for "
                        + 3 * sizes.length + " messages: one per receive slot at most");
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

    /** A connect nobody answers fails within its timeout, and a cancelled one leaves nothing behind. */
    @OnEveryLabTransport
    void connectsFailOrAreCancelledCleanly(Transport t) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        ChannelOptions o = ChannelOptions.defaults().withLoops(0).withBusyPollNanos(0);
        try (ChannelGroup client = group(t, o); Driver loop = new Driver(client.newDrivenLoop(), "driven-client")) {
            InetSocketAddress nobody = new InetSocketAddress(client.address(), port);
            long start = System.nanoTime();
            Exception e = assertThrows(Exception.class, () -> client.connect(nobody, (c, m) -> m.release(), loop.loop,
                    Duration.ofSeconds(5)).get(SECONDS, TimeUnit.SECONDS));
            assertTrue(e instanceof java.util.concurrent.ExecutionException, "it fails, not times out here: " + e);
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(SECONDS), "within its own timeout");
            for (int i = 0; i < 5; i++) {
                try (ChannelServer s = client.listen(new InetSocketAddress(client.address(), 0),
                        request -> request.accept(loop.loop, (c, m) -> m.release()))) {
                    CompletableFuture<MessageChannel> f = client.connect(s.address(), (c, m) -> m.release(),
                            loop.loop, Duration.ofSeconds(SECONDS));
                    Thread.sleep(i * 20L); // cancelled at different steps of the set-up
                    if (!f.cancel(false) && !f.isCompletedExceptionally()) {
                        f.join().close(); // it opened first: closed as any channel, the peer's end with it
                    }
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
                    while (client.channelCount() > 0 && System.nanoTime() < deadline) {
                        Thread.sleep(10);
                    }
                    assertEquals(0, client.channelCount(), "a cancelled connect leaves no channel (round " + i + ")");
                    System.out.printf("%s: connect cancelled after %d ms: %s; %d set-ups still on the loop%n", t,
                            i * 20, f.isCancelled() ? "cancelled" : "done first", loop.loop.channelCount());
                }
            }
            // A set-up cancelled while its route resolved ends when the resolution does; the loop counts it.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
            while (loop.loop.channelCount() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, loop.loop.channelCount(), "every cancelled set-up ended");
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "every verbs object freed");
    }

    /** A request accepted on another group's loop (another device context) is refused and rejected. */
    @OnEveryLabTransport
    void aRequestAcceptedOnAnotherGroupsLoopIsRejected(Transport t) throws Exception {
        ChannelOptions o = ChannelOptions.defaults().withLoops(0).withBusyPollNanos(0);
        try (ChannelGroup server = group(t, o); ChannelGroup other = group(t, o);
             Driver loop = new Driver(server.newDrivenLoop(), "driven-server");
             Driver foreign = new Driver(other.newDrivenLoop(), "driven-other")) {
            CompletableFuture<Throwable> refused = new CompletableFuture<>();
            try (ChannelServer s = server.listen(new InetSocketAddress(server.address(), 0),
                    request -> request.accept(foreign.loop, (c, m) -> m.release())
                            .whenComplete((c, e) -> refused.complete(e)))) {
                CompletableFuture<MessageChannel> f = server.connect(s.address(), (c, m) -> m.release(), loop.loop,
                        Duration.ofSeconds(SECONDS));
                Throwable e = refused.get(SECONDS, TimeUnit.SECONDS);
                assertTrue(e instanceof IllegalArgumentException && e.getMessage().contains("not of the group"),
                        "refused: " + e);
                assertThrows(java.util.concurrent.ExecutionException.class, () -> f.get(SECONDS, TimeUnit.SECONDS),
                        "the peer's connect is rejected");
            }
        }
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
