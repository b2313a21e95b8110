package org.rdmapanama.channel;

import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 0 bytes allocated per message in steady state, on both sides: 30,000
 * messages (eager and rendezvous) each way, with the allocate, send,
 * receive, release and credit of every one, measured on the loop threads
 * and on a user thread that sends through the hand-over queue. Two rounds
 * of 20,000 warm the JIT up; a round of 30,000 that allocates is repeated
 * up to twice (the JIT may still compile); the last must allocate nothing.
 * And the loops woken for every message, as in JMH's {@code ChannelBenchmark}:
 * a few hundred messages a round, the path still interpreted or in C1's code,
 * which removes no allocation by escape analysis.
 */
@Tag("device")
class ChannelAllocationDeviceTest {
    static final int MESSAGES = 30_000;
    static final int ROUNDS = 5;
    static final int WARMUP_ROUNDS = 2;
    static final int WARMUP = 20_000;
    /**
     * Loops that sleep as soon as they are idle: the lab pins this JVM to one
     * vCPU, where two busy-polling loops take turns by the scheduler's slice;
     * and the arm, sleep and wake-up of every message are measured too.
     */
    static final ChannelOptions SLEEPING = ChannelOptions.defaults().withBusyPollNanos(0);

    static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static long[] loopThreads(ChannelGroup... groups) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> {
                    for (ChannelGroup g : groups) {
                        if (t.getName().startsWith(g + "-loop-")) {
                            return true;
                        }
                    }
                    return false;
                }).mapToLong(Thread::threadId).toArray();
    }

    static long allocated(long[] ids) {
        long sum = 0;
        for (long b : THREADS.getThreadAllocatedBytes(ids)) {
            sum += b;
        }
        return sum;
    }

    /** Echoes on the server; the client sends the next message from its handler: all on the loop threads. */
    static final class PingPong implements MessageHandler {
        final int[] sizes;
        long left;
        int seq;
        CompletableFuture<Void> done;

        PingPong(int... sizes) {
            this.sizes = sizes;
        }

        void send(MessageChannel ch) throws Exception {
            int size = sizes[seq % sizes.length];
            MessageBuffer b = ch.allocate(size);
            b.segment().set(JAVA_INT_UNALIGNED, 0, seq);
            ch.send(b, size);
        }

        @Override
        public void onMessage(MessageChannel ch, Message m) throws Exception {
            int got = m.segment().get(JAVA_INT_UNALIGNED, 0);
            int length = m.length();
            m.release();
            if (got != seq || length != sizes[seq % sizes.length]) {
                done.completeExceptionally(new AssertionError("reply " + got + " of " + length + " B for " + seq));
                return;
            }
            seq++;
            if (--left == 0) {
                done.complete(null);
            } else {
                send(ch);
            }
        }
    }

    @OnEveryLabTransport
    void steadyStateAllocatesNothingPerMessage(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = SLEEPING;
        try (ChannelGroup server = ChannelDeviceTest.group(t, o); ChannelServer s = ChannelDeviceTest.echo(server, port);
             ChannelGroup client = ChannelDeviceTest.group(t, o)) {
            int[] sizes = new int[16]; // one rendezvous in 16: its RDMA Read round trips are the slow part
            java.util.Arrays.fill(sizes, 64);
            sizes[15] = o.eagerLimit() + 1024;
            PingPong driver = new PingPong(sizes);
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), driver)
                    .get(30, TimeUnit.SECONDS);
            long[] loops = loopThreads(server, client);
            assertEquals(2, loops.length, "one loop thread per group");
            long bytes = -1;
            for (int round = 1; round <= ROUNDS && bytes != 0; round++) {
                int n = round <= WARMUP_ROUNDS ? WARMUP : MESSAGES;
                CompletableFuture<Void> done = new CompletableFuture<>();
                ch.execute(() -> {
                    driver.done = done;
                    driver.left = n;
                    try {
                        driver.send(ch);
                    } catch (Exception e) {
                        done.completeExceptionally(e);
                    }
                });
                Thread.sleep(50); // the round's set-up (a lambda, a future) is not the data path
                long before = allocated(loops);
                done.get(300, TimeUnit.SECONDS);
                bytes = allocated(loops) - before;
                System.out.printf("%s round %d: %d messages each way, %d bytes allocated on the loop threads%n",
                        t, round, n, bytes);
                if (n != MESSAGES) {
                    bytes = -1; // a warm-up round proves nothing
                }
            }
            assertEquals(0, bytes, "bytes allocated on the loop threads over " + MESSAGES + " messages");
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Echoes, and keeps the server's side of the channel: its loop is the server's. */
    static final class Echo implements MessageHandler {
        volatile MessageChannel side;

        @Override
        public void onMessage(MessageChannel ch, Message m) throws Exception {
            if (side == null) {
                side = ch;
            }
            ChannelDeviceTest.echo(ch, m);
        }
    }

    static final int WOKEN_WARMUP = 500;
    static final int WOKEN_ROUND = 500;
    static final int WOKEN_ROUNDS = 4;

    /**
     * Both loops sleep in poll(2) between messages and are woken for each: a user
     * thread sends a message and releases its reply (two hand-overs to the client's
     * loop, each an eventfd signal if it sleeps), the server echoes from its handler,
     * and an idle loop sleeps at once (busyPollNanos 0). Rounds of a few hundred
     * messages, as JMH's ChannelBenchmark runs: before C2 has compiled the wake-up,
     * where a downcall that captured errno allocated 40 B (poll(2) and
     * ibv_get_cq_event on the server's loop, 80 B a message; on the client's, 160).
     * A round that allocates is repeated, up to {@link #WOKEN_ROUNDS} (the JIT and
     * the JDK's method-handle code still settle: on rxe0 rounds of 0 B alternated
     * with rounds of about 1 KB); one must allocate nothing on either loop. With
     * the capture every round allocated 80 to 160 B a message.
     */
    @OnEveryLabTransport
    void loopsWokenForEveryMessageAllocateNothing(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = SLEEPING;
        Echo echo = new Echo();
        AtomicReference<Message> reply = new AtomicReference<>();
        try (ChannelGroup server = ChannelDeviceTest.group(t, o); ChannelServer s = server.listen(port, echo);
             ChannelGroup client = ChannelDeviceTest.group(t, o)) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> reply.set(m))
                    .get(30, TimeUnit.SECONDS);
            long[] loops = loopThreads(server, client);
            assertEquals(2, loops.length, "one loop thread per group");
            int seq = 0;
            long bytes = -1;
            for (int round = 0; round <= WOKEN_ROUNDS && bytes != 0; round++) {
                int n = round == 0 ? WOKEN_WARMUP : WOKEN_ROUND;
                long serverSleeps = echo.side == null ? 0 : echo.side.loop.sleeps();
                long clientSleeps = ch.loop.sleeps();
                long before = allocated(loops);
                for (int i = 0; i < n; i++) {
                    MessageBuffer b = ch.allocate(64);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, ++seq);
                    ch.send(b, 64);
                    Message m;
                    while ((m = reply.getAndSet(null)) == null) {
                        Thread.yield(); // the loops share this JVM's one vCPU in the lab
                    }
                    int got = m.segment().get(JAVA_INT_UNALIGNED, 0);
                    m.release();
                    assertEquals(seq, got, "the reply's sequence number");
                }
                bytes = allocated(loops) - before;
                long slept = echo.side.loop.sleeps() - serverSleeps;
                long clientSlept = ch.loop.sleeps() - clientSleeps;
                System.out.printf("%s woken round %d: %d messages, the loops slept %d (server) and %d (client) times,"
                        + " %d bytes allocated on them (%.1f a message)%n", t, round, n, slept, clientSlept, bytes,
                        (double) bytes / n);
                if (round == 0) {
                    bytes = -1; // a warm-up round proves nothing
                    continue;
                }
                assertTrue(slept >= n / 2, "the server's loop sleeps between messages: " + slept + " times in " + n);
            }
            assertEquals(0, bytes, "bytes allocated on the loop threads over " + WOKEN_ROUND
                    + " messages, each waking both loops");
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** A user thread's sends go through the hand-over queue: it allocates nothing either. */
    @OnEveryLabTransport
    void aUserThreadSendsWithoutAllocating(Transport t) throws Exception {
        int port = LabPorts.next();
        ChannelOptions o = SLEEPING;
        AtomicLong replies = new AtomicLong();
        try (ChannelGroup server = ChannelDeviceTest.group(t, o); ChannelServer s = ChannelDeviceTest.echo(server, port);
             ChannelGroup client = ChannelDeviceTest.group(t, o)) {
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> {
                m.release();
                replies.incrementAndGet();
            }).get(30, TimeUnit.SECONDS);
            long me = Thread.currentThread().threadId();
            long[] all = loopThreads(server, client);
            long bytes = -1;
            long loopBytes = -1;
            int n = MESSAGES / 10;
            for (int round = 1; round <= ROUNDS && (bytes != 0 || loopBytes != 0); round++) {
                long loopsBefore = allocated(all); // its long[] is this thread's: taken before this thread's count
                long before = THREADS.getThreadAllocatedBytes(me);
                for (int i = 0; i < n; i++) {
                    long want = replies.get() + 1;
                    MessageBuffer b = ch.allocate(64);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, i);
                    ch.send(b, 64);
                    while (replies.get() < want) {
                        Thread.yield(); // the loop thread may share this CPU (the lab pins a JVM to one)
                    }
                }
                bytes = THREADS.getThreadAllocatedBytes(me) - before;
                loopBytes = allocated(all) - loopsBefore;
                System.out.printf("%s round %d: %d sends from a user thread, %d bytes allocated there, %d on the loops%n",
                        t, round, n, bytes, loopBytes);
                if (round <= WARMUP_ROUNDS) {
                    bytes = loopBytes = -1; // a warm-up round proves nothing
                }
            }
            assertEquals(0, bytes, "bytes allocated by the sending thread");
            assertEquals(0, loopBytes, "bytes allocated on the loop threads");
            ch.close();
            ch.closeFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
