package org.rdmapanama.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CompletionWaiter}: one poll(2) on a completion channel and a
 * {@link Wakeup}. It returns the armed CQ on a completion, null on a wakeup
 * or a timeout, allocates nothing per wait, belongs to one thread, and fails
 * cleanly once anything it uses is closed.
 */
@Tag("device")
class CompletionWaiterDeviceTest {
    private static final long SECOND = 1_000_000_000L;
    private static final Duration T = Duration.ofSeconds(10);

    /**
     * An unconnected QP's posted receive completes (flushed) when the QP moves
     * to ERR: a real completion on both transports without a connection (iWARP
     * has no out-of-band setup, and rdma_cm makes its own CQs).
     */
    @OnEveryLabTransport
    void wakesOnACompletionAfterArming(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport);
             Wakeup wakeup = Wakeup.create("test")) {
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue cq = ctx.createCompletionQueue(16, channel);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            QueuePair qp = pd.createQueuePair(QueuePairConfig.rc(cq));
            MemoryRegion mr = pd.allocate(4096);
            qp.toInit(ctx.selection().port().number());
            qp.postRecv(mr, 0, 64, 31);
            try (CompletionWaiter waiter = channel.newWaiter(wakeup);
                 CompletionBatch batch = new CompletionBatch(4)) {
                cq.requestNotification(false);
                assertNull(waiter.await(0), "nothing completed yet");
                Thread fault = Thread.ofPlatform().start(() -> {
                    try {
                        Thread.sleep(200); // the waiter is asleep in poll by then
                        qp.toError();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                long t0 = System.nanoTime();
                CompletionQueue got = waiter.await(10 * SECOND);
                long waited = System.nanoTime() - t0;
                fault.join();
                assertSame(cq, got, "the armed CQ, after " + waited / 1_000_000 + " ms");
                assertEquals(1, cq.pollUntil(batch, T));
                assertEquals(31, batch.wrId(0));
                assertEquals(WcStatus.WR_FLUSH_ERR, batch.status(0));
                assertNull(waiter.await(50_000_000L), "not re-armed: no second event");
            }
        }
    }

    /** The same with a real Send between two RC QPs (out of band: RoCE only). */
    @Test
    void wakesOnAReceivedSend() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2);
             Wakeup wakeup = Wakeup.create("test")) {
            Rc rc = Rc.connect(ctx);
            try (CompletionWaiter waiter = rc.channel.newWaiter(wakeup);
                 SendRequest send = rc.a.newSendRequest(1, 1);
                 CompletionBatch batch = new CompletionBatch(4)) {
                rc.b.postRecv(rc.mrB, 128, 64, 7);
                rc.cqB.requestNotification(false);
                rc.mrA.segment().set(JAVA_LONG, 0, 0xfeedL);
                rc.a.postSend(send.wrId(8).opcode(0, Opcode.SEND).sge(rc.mrA, 0, 8));
                assertSame(rc.cqB, waiter.await(10 * SECOND));
                assertEquals(1, rc.cqB.pollUntil(batch, T));
                batch.requireSuccess(0);
                assertEquals(7, batch.wrId(0));
                assertEquals(0xfeedL, rc.mrB.segment().get(JAVA_LONG, 128));
            }
        }
    }

    @OnEveryLabTransport
    void returnsNullOnAWakeupAndOnATimeout(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport);
             Wakeup wakeup = Wakeup.create("test")) {
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue cq = ctx.createCompletionQueue(16, channel);
            try (CompletionWaiter waiter = channel.newWaiter(wakeup)) {
                cq.requestNotification(false);
                long t0 = System.nanoTime();
                assertNull(waiter.await(100_000_000L));
                long timedOut = System.nanoTime() - t0;
                assertTrue(timedOut >= 100_000_000L, "timed out after " + timedOut + " ns");

                Thread waker = Thread.ofPlatform().start(() -> {
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                    wakeup.signal();
                });
                t0 = System.nanoTime();
                assertNull(waiter.await(-1), "woken, without a timeout");
                long woken = System.nanoTime() - t0;
                waker.join();
                assertTrue(woken < 10 * SECOND, "woken after " + woken + " ns");

                wakeup.signal();
                wakeup.signal(); // coalesce: one drain clears both
                assertNull(waiter.await(-1));
                t0 = System.nanoTime();
                assertNull(waiter.await(50_000_000L));
                assertTrue(System.nanoTime() - t0 >= 50_000_000L, "the wakeup was drained: this one slept");
            }
        }
    }

    /** Wakeup and timeout cycles on every transport; on RoCE, full event cycles with a real Send each. */
    @OnEveryLabTransport
    void allocatesNothingPerWait(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport);
             Wakeup wakeup = Wakeup.create("test")) {
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue cq = ctx.createCompletionQueue(16, channel);
            try (CompletionWaiter waiter = channel.newWaiter(wakeup)) {
                cq.requestNotification(false);
                long allocated = measure(() -> {
                    wakeup.signal();
                    if (waiter.await(-1) != null || waiter.await(0) != null) {
                        throw new AssertionError("no CQ event was due");
                    }
                });
                System.out.println("allocation test: 10000 wakeup+timeout await cycles on " + ctx.device().name()
                        + " allocated " + allocated + " bytes");
                assertEquals(0, allocated, "bytes allocated by 10k wakeup and timeout awaits");
            }
        }
        if (transport != Transport.ROCE_V2) {
            return;
        }
        try (DeviceContext ctx = LabDevices.open(transport);
             Wakeup wakeup = Wakeup.create("test")) {
            Rc rc = Rc.connect(ctx);
            try (CompletionWaiter waiter = rc.channel.newWaiter(wakeup);
                 SendRequest send = rc.a.newSendRequest(1, 1).wrId(2).opcode(0, Opcode.SEND).sge(rc.mrA, 0, 8);
                 CompletionBatch batchA = new CompletionBatch(1);
                 CompletionBatch batchB = new CompletionBatch(1)) {
                long allocated = measure(() -> {
                    rc.b.postRecv(rc.mrB, 0, 64, 1);
                    rc.cqB.requestNotification(false);
                    rc.a.postSend(send);
                    if (waiter.await(10 * SECOND) != rc.cqB) {
                        throw new AssertionError("no event for the receive");
                    }
                    while (rc.cqB.poll(batchB) == 0) {
                        Thread.onSpinWait(); // the event may come before the completion is visible
                    }
                    while (rc.cqA.poll(batchA) == 0) {
                        Thread.onSpinWait();
                    }
                    if (!batchA.isSuccess(0) || !batchB.isSuccess(0)) {
                        throw new AssertionError("a completion failed");
                    }
                });
                System.out.println("allocation test: 10000 postRecv+arm+send+await+poll cycles on "
                        + ctx.device().name() + " allocated " + allocated + " bytes");
                assertEquals(0, allocated, "bytes allocated by 10k event cycles");
            }
        }
    }

    @OnEveryLabTransport
    void anotherThreadIsRefused(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport);
             Wakeup wakeup = Wakeup.create("test")) {
            CompletionChannel channel = ctx.createCompletionChannel();
            try (CompletionWaiter waiter = channel.newWaiter(wakeup)) {
                AtomicReference<Throwable> await = new AtomicReference<>();
                AtomicReference<Throwable> close = new AtomicReference<>();
                Thread.ofPlatform().name("intruder").start(() -> {
                    await.set(catching(() -> waiter.await(0)));
                    close.set(catching(waiter::close));
                }).join();
                assertInstanceOf(WrongThreadException.class, await.get());
                assertTrue(await.get().getMessage().contains("CompletionWaiter of CompletionChannel"),
                        await.get().getMessage());
                assertInstanceOf(WrongThreadException.class, close.get());
                assertNull(waiter.await(0), "still usable on its own thread");
            }
        }
    }

    @OnEveryLabTransport
    void failsCleanlyOnceClosed(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport)) {
            CompletionChannel channel = ctx.createCompletionChannel();
            Wakeup wakeup = Wakeup.create("test");
            CompletionWaiter waiter = channel.newWaiter(wakeup);
            ResourceInUseException busy = assertThrows(ResourceInUseException.class, channel::close);
            assertTrue(busy.getMessage().contains("CompletionWaiter"), busy.getMessage());
            assertNull(waiter.await(0), "the refused close freed nothing");

            wakeup.close();
            wakeup.signal(); // does nothing: never a write to a closed fd
            assertThrows(ClosedResourceException.class, () -> waiter.await(0));
            assertThrows(ClosedResourceException.class, () -> channel.newWaiter(wakeup));
            waiter.close();
            waiter.close(); // idempotent
            assertThrows(ClosedResourceException.class, () -> waiter.await(0));
            channel.close();
            try (Wakeup other = Wakeup.create("test")) {
                assertThrows(ClosedResourceException.class, () -> channel.newWaiter(other));
            }
        }
    }

    private interface Cycle {
        void run() throws Exception;
    }

    /**
     * Bytes this thread allocated over a round of 10,000 cycles once warm: rounds
     * run until one allocates nothing (at most ten), so that the JIT, which
     * under emulation compiles late, has compiled the path; the last round counts.
     */
    private static long measure(Cycle cycle) throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long allocated = -1;
        for (int round = 0; round < 10 && allocated != 0; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 10_000; i++) {
                cycle.run();
            }
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
            System.out.println("allocation test: round " + round + ": " + allocated + " bytes");
        }
        return allocated;
    }

    /** Two RC QPs of one RoCE context, connected out of band; B's CQ has a completion channel. */
    private record Rc(CompletionChannel channel, CompletionQueue cqA, CompletionQueue cqB, QueuePair a, QueuePair b,
                      MemoryRegion mrA, MemoryRegion mrB) {
        static Rc connect(DeviceContext ctx) throws Exception {
            CompletionChannel channel = ctx.createCompletionChannel();
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cqA = ctx.createCompletionQueue(64);
            CompletionQueue cqB = ctx.createCompletionQueue(64, channel);
            QueuePair a = pd.createQueuePair(QueuePairConfig.rc(cqA));
            QueuePair b = pd.createQueuePair(QueuePairConfig.rc(cqB));
            LabDevices.connect(a, b);
            return new Rc(channel, cqA, cqB, a, b, pd.allocate(4096), pd.allocate(4096));
        }
    }

    private interface Call {
        void run() throws Exception;
    }

    private static Throwable catching(Call call) {
        try {
            call.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }
}
