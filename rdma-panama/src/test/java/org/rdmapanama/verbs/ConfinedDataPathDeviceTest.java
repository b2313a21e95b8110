package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The thread-confined data path ({@link ConfinedPoller}, {@link ConfinedPoster})
 * on the RoCE device: it moves data like the shared one, allocates nothing,
 * and every route by which a confined call could reach freed memory is refused.
 */
@Tag("device")
class ConfinedDataPathDeviceTest {
    private record Pair(DeviceContext ctx, ProtectionDomain pd, CompletionQueue cqA, CompletionQueue cqB,
                        QueuePair a, QueuePair b, MemoryRegion mrA, MemoryRegion mrB) {}

    private static Pair connected(DeviceContext ctx) throws Exception {
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cqA = ctx.createCompletionQueue(64);
        CompletionQueue cqB = ctx.createCompletionQueue(64);
        QueuePair a = pd.createQueuePair(QueuePairConfig.rc(cqA));
        QueuePair b = pd.createQueuePair(QueuePairConfig.rc(cqB));
        Access[] remote = {Access.REMOTE_READ, Access.REMOTE_WRITE};
        MemoryRegion mrA = pd.allocate(4096, remote);
        MemoryRegion mrB = pd.allocate(4096, remote);
        LabDevices.connect(a, b, remote);
        return new Pair(ctx, pd, cqA, cqB, a, b, mrA, mrB);
    }

    @Test
    void sendWriteAndPollThroughConfinedObjectsAllocateNothing() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2)) {
            Pair p = connected(ctx);
            try (ConfinedPoster postA = p.a().confinedPoster();
                 ConfinedPoster postB = p.b().confinedPoster();
                 ConfinedPoller pollA = p.cqA().confinedPoller();
                 ConfinedPoller pollB = p.cqB().confinedPoller()) {
                CompletionBatch batchA = p.cqA().newBatch(4);
                CompletionBatch batchB = p.cqB().newBatch(4);
                // A Send into a posted receive: the bytes arrive and both sides complete.
                p.mrA().segment().set(JAVA_LONG, 0, 0x1234_5678_9abcL);
                postB.postRecv(p.b().newReceiveRequest(1, 1).wrId(21).sge(p.mrB(), 0, 64));
                postA.postSend(p.a().newSendRequest(1, 1).wrId(22).opcode(0, Opcode.SEND).sge(p.mrA(), 0, 8));
                assertEquals(1, pollA.pollUntil(batchA, Duration.ofSeconds(10)));
                batchA.requireSuccess(0);
                assertEquals(22, batchA.wrId(0));
                assertEquals(1, pollB.pollUntil(batchB, Duration.ofSeconds(10)));
                batchB.requireSuccess(0);
                assertEquals(21, batchB.wrId(0));
                assertEquals(WcOpcode.RECV, batchB.opcode(0));
                assertEquals(8, batchB.byteLength(0));
                assertEquals(0x1234_5678_9abcL, p.mrB().segment().get(JAVA_LONG, 0));

                SendRequest write = p.a().newSendRequest(1, 1).wrId(23).opcode(0, Opcode.RDMA_WRITE)
                        .sge(p.mrA(), 0, 64).remote(p.mrB().address(), p.mrB().rkey());
                com.sun.management.ThreadMXBean threads =
                        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                long allocated = 0;
                for (int round = 0; round < 4; round++) { // the first rounds let the JIT compile the path
                    long before = threads.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < 50_000; i++) {
                        p.mrA().segment().set(JAVA_LONG, 8, i);
                        postA.postSend(write);
                        while (pollA.poll(batchA) == 0) {
                            Thread.onSpinWait();
                        }
                        if (!batchA.isSuccess(0)) {
                            throw new AssertionError(batchA.status(0).describe());
                        }
                    }
                    allocated = threads.getCurrentThreadAllocatedBytes() - before;
                }
                System.out.println("allocation test: 50000 confined post+poll iterations allocated " + allocated + " bytes");
                assertEquals(0, allocated, "bytes allocated by 50k confined post+poll iterations");
                assertEquals(49_999, p.mrB().segment().get(JAVA_LONG, 8), "the last write's data arrived");
            }
        }
    }

    @Test
    void theCqAndQpRefuseToCloseWhileAConfinedObjectHoldsThem() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2)) {
            Pair p = connected(ctx);
            ConfinedPoller poller = p.cqA().confinedPoller();
            ConfinedPoster poster = p.a().confinedPoster();
            ResourceInUseException qpBusy = assertThrows(ResourceInUseException.class, () -> p.a().close());
            assertTrue(qpBusy.getMessage().contains("ConfinedPoster of QueuePair"), qpBusy.getMessage());
            // Nothing was freed: both still work.
            poster.postSend(p.a().newSendRequest(1, 1).wrId(5).opcode(0, Opcode.RDMA_WRITE)
                    .sge(p.mrA(), 0, 8).remote(p.mrB().address(), p.mrB().rkey()));
            CompletionBatch batch = p.cqA().newBatch(1);
            assertEquals(1, poller.pollUntil(batch, Duration.ofSeconds(10)));
            batch.requireSuccess(0);
            // Closing the context closes what it can and keeps the held QP and CQ.
            ResourceInUseException ctxBusy = assertThrows(ResourceInUseException.class, ctx::close);
            assertTrue(ctxBusy.getMessage().contains("Confined"), ctxBusy.getMessage());
            assertTrue(!p.a().isClosed() && !p.cqA().isClosed());
            assertEquals(0, poller.poll(batch));

            poster.close();
            p.a().close();
            ResourceInUseException cqBusy = assertThrows(ResourceInUseException.class, () -> p.cqA().close());
            assertTrue(cqBusy.getMessage().contains("ConfinedPoller of CompletionQueue"), cqBusy.getMessage());
            poller.close();
            poller.close(); // idempotent
            p.cqA().close();
            assertThrows(ClosedResourceException.class, () -> poller.poll(batch));
            assertThrows(ClosedResourceException.class, () -> p.cqA().confinedPoller());
            assertThrows(ClosedResourceException.class, () -> p.a().confinedPoster());
        }
    }

    @Test
    void anotherThreadCanNeitherUseNorCloseThemWhileTheirThreadLives() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2)) {
            Pair p = connected(ctx);
            ConfinedPoller poller = p.cqA().confinedPoller();
            ConfinedPoster poster = p.a().confinedPoster();
            CompletionBatch batch = p.cqA().newBatch(1);
            SendRequest write = p.a().newSendRequest(1, 1).wrId(6).opcode(0, Opcode.RDMA_WRITE)
                    .sge(p.mrA(), 0, 8).remote(p.mrB().address(), p.mrB().rkey());
            AtomicReference<Throwable> poll = new AtomicReference<>();
            AtomicReference<Throwable> post = new AtomicReference<>();
            AtomicReference<Throwable> close = new AtomicReference<>();
            Thread other = Thread.ofPlatform().name("intruder").start(() -> {
                poll.set(catching(() -> poller.poll(batch)));
                post.set(catching(() -> poster.postSend(write)));
                close.set(catching(poller::close));
            });
            other.join();
            assertInstanceOf(WrongThreadException.class, poll.get());
            assertTrue(poll.get().getMessage().contains("belongs to thread \"" + Thread.currentThread().getName()),
                    poll.get().getMessage());
            assertInstanceOf(WrongThreadException.class, post.get());
            assertInstanceOf(WrongThreadException.class, close.get());
            assertEquals(0, poller.poll(batch), "nothing was posted by the refused thread");
            poster.close();
            poller.close();
        }
    }

    @Test
    void onceTheirThreadHasEndedAnyThreadMayCloseThem() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2)) {
            Pair p = connected(ctx);
            AtomicReference<ConfinedPoller> poller = new AtomicReference<>();
            AtomicReference<ConfinedPoster> poster = new AtomicReference<>();
            Thread worker = Thread.ofPlatform().name("worker").start(() -> {
                poller.set(p.cqA().confinedPoller());
                poster.set(p.a().confinedPoster());
            });
            worker.join();
            assertThrows(ResourceInUseException.class, () -> p.cqA().close());
            poster.get().close(); // the worker has ended: no call of it can be running
            poller.get().close();
            ctx.close();
            assertTrue(p.cqA().isClosed() && p.a().isClosed());
        }
    }

    @Test
    void aBatchOrRequestWhoseMemoryTheCqOrQpDoesNotOwnIsRefused() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2);
             CompletionBatch standalone = new CompletionBatch(1)) {
            Pair p = connected(ctx);
            try (ConfinedPoller poller = p.cqA().confinedPoller();
                 ConfinedPoster poster = p.a().confinedPoster()) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> poller.poll(standalone));
                assertTrue(e.getMessage().contains("batches of its own CQ"), e.getMessage());
                assertThrows(IllegalArgumentException.class, () -> poller.poll(p.cqB().newBatch(1)));
                assertThrows(IllegalArgumentException.class,
                        () -> poster.postRecv(p.b().newReceiveRequest(1, 1).sge(p.mrA(), 0, 8)));
                SendRequest others = p.b().newSendRequest(1, 1).opcode(0, Opcode.SEND).sge(p.mrB(), 0, 8);
                assertThrows(IllegalArgumentException.class, () -> poster.postSend(others));
                SendRequest closed = p.a().newSendRequest(1, 1).opcode(0, Opcode.SEND).sge(p.mrA(), 0, 8);
                closed.close();
                assertThrows(ClosedResourceException.class, () -> poster.postSend(closed));
            }
        }
    }

    /**
     * The confined path calls the first provider's functions through constant call sites; a second
     * provider in the same process (siw next to rxe) must keep calling its own, never the first's.
     */
    @Test
    void twoProvidersInOneProcessEachPollTheirOwnCq() throws Exception {
        try (DeviceContext roce = LabDevices.open(Transport.ROCE_V2);
             DeviceContext iwarp = LabDevices.open(Transport.IWARP)) {
            CompletionQueue cqR = roce.createCompletionQueue(16);
            CompletionQueue cqI = iwarp.createCompletionQueue(16);
            try (ConfinedPoller pollR = cqR.confinedPoller();
                 ConfinedPoller pollI = cqI.confinedPoller()) {
                assertTrue(!(pollR.boundToConstantSite() && pollI.boundToConstantSite()),
                        "one call site cannot be bound to both providers' poll_cq");
                CompletionBatch batchR = cqR.newBatch(4);
                CompletionBatch batchI = cqI.newBatch(4);
                for (int i = 0; i < 100_000; i++) { // long enough for the JIT to compile both branches
                    assertEquals(0, pollR.poll(batchR));
                    assertEquals(0, pollI.poll(batchI));
                }
            }
            // And data still moves on the RoCE device, whichever of the two was bound.
            Pair p = connected(roce);
            try (ConfinedPoster post = p.a().confinedPoster();
                 ConfinedPoller poll = p.cqA().confinedPoller()) {
                CompletionBatch batch = p.cqA().newBatch(1);
                SendRequest write = p.a().newSendRequest(1, 1).wrId(5).opcode(0, Opcode.RDMA_WRITE)
                        .sge(p.mrA(), 0, 8).remote(p.mrB().address(), p.mrB().rkey());
                for (int i = 0; i < 1_000; i++) {
                    p.mrA().segment().set(JAVA_LONG, 0, i);
                    post.postSend(write);
                    assertEquals(1, poll.pollUntil(batch, Duration.ofSeconds(10)));
                    batch.requireSuccess(0);
                }
                assertEquals(999, p.mrB().segment().get(JAVA_LONG, 0));
            }
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
