package org.rdmapanama.verbs;

import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * Every verbs operation between two RC queue pairs on the RoCE device,
 * connected to each other out of band (no rdma_cm), with the data checked
 * byte for byte.
 */
@Tag("device")
class VerbsLoopbackDeviceTest {
    static final int SIZE = 4096;
    static DeviceContext ctx;
    static ProtectionDomain pd;
    static CompletionQueue cqA, cqB;
    static QueuePair a, b;
    static MemoryRegion mrA, mrB;
    static CompletionBatch batch;

    @BeforeAll
    static void connect() throws Exception {
        ctx = LabDevices.open(Transport.ROCE_V2);
        pd = ctx.allocateProtectionDomain();
        cqA = ctx.createCompletionQueue(64);
        cqB = ctx.createCompletionQueue(64);
        a = pd.createQueuePair(QueuePairConfig.rc(cqA).withSge(2, 2).withInline(64));
        b = pd.createQueuePair(QueuePairConfig.rc(cqB).withSge(2, 2).withInline(64));
        Access[] remote = {Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC};
        mrA = pd.allocate(SIZE, remote);
        mrB = pd.allocate(SIZE, remote);
        batch = new CompletionBatch(16);
        LabDevices.connect(a, b, remote);
        assertEquals(QpState.RTS, a.state());
        assertEquals(QpState.RTS, b.state());
    }

    @AfterAll
    static void close() throws Exception {
        if (batch != null) {
            batch.close();
        }
        if (ctx != null) {
            ctx.close(); // closes QPs, MRs, CQs and the PD, newest first
        }
    }

    static void fill(MemoryRegion mr, int seed) {
        MemorySegment s = mr.segment();
        for (int i = 0; i < SIZE; i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
    }

    static void expectCompletion(CompletionQueue cq, long wrId, WcOpcode opcode) throws RdmaException {
        int n = cq.pollUntil(batch, Duration.ofSeconds(10));
        assertEquals(1, n, "one completion expected on " + cq);
        batch.requireSuccess(0);
        assertEquals(wrId, batch.wrId(0));
        assertEquals(opcode, batch.opcode(0));
    }

    @Test
    void sendAndReceiveWithImmediate() throws Exception {
        fill(mrA, 1);
        mrB.segment().fill((byte) 0);
        try (ReceiveRequest recv = b.newReceiveRequest(1, 1); SendRequest send = a.newSendRequest(1, 1)) {
            b.postRecv(recv.wrId(7).sge(mrB, 0, SIZE));
            a.postSend(send.wrId(8).opcode(0, Opcode.SEND_WITH_IMM).immediate(0, 0xCAFE).sge(mrA, 0, 1000));
            expectCompletion(cqA, 8, WcOpcode.SEND);
            expectCompletion(cqB, 7, WcOpcode.RECV);
            assertEquals(1000, batch.byteLength(0));
            assertTrue(batch.hasImmediate(0));
            assertEquals(0xCAFE, batch.immediate(0));
        }
        assertArrayEquals(mrA.segment().asSlice(0, 1000).toArray(JAVA_BYTE), mrB.segment().asSlice(0, 1000).toArray(JAVA_BYTE));
    }

    @Test
    void inlineSendWithTwoSges() throws Exception {
        fill(mrA, 2);
        mrB.segment().fill((byte) 0);
        try (ReceiveRequest recv = b.newReceiveRequest(1, 1); SendRequest send = a.newSendRequest(1, 2)) {
            b.postRecv(recv.wrId(1).sge(mrB, 0, SIZE));
            send.wrId(2).opcode(0, Opcode.SEND).sge(0, 0, mrA, 0, 16).sge(0, 1, mrA, 100, 16).inline(0, true);
            a.postSend(send);
            expectCompletion(cqA, 2, WcOpcode.SEND);
            expectCompletion(cqB, 1, WcOpcode.RECV);
            assertEquals(32, batch.byteLength(0));
        }
        assertArrayEquals(mrA.segment().asSlice(0, 16).toArray(JAVA_BYTE), mrB.segment().asSlice(0, 16).toArray(JAVA_BYTE));
        assertArrayEquals(mrA.segment().asSlice(100, 16).toArray(JAVA_BYTE), mrB.segment().asSlice(16, 16).toArray(JAVA_BYTE));
    }

    @Test
    void rdmaWriteAndWriteWithImmediate() throws Exception {
        fill(mrA, 3);
        mrB.segment().fill((byte) 0);
        try (SendRequest send = a.newSendRequest(1, 1); ReceiveRequest recv = b.newReceiveRequest(1, 1)) {
            a.postSend(send.wrId(3).opcode(0, Opcode.RDMA_WRITE).sge(mrA, 0, SIZE).remote(mrB.address(), mrB.rkey()));
            expectCompletion(cqA, 3, WcOpcode.RDMA_WRITE);
            assertArrayEquals(mrA.segment().toArray(JAVA_BYTE), mrB.segment().toArray(JAVA_BYTE));

            b.postRecv(recv.wrId(4).sge(mrB, 0, 1));
            fill(mrA, 4);
            a.postSend(send.wrId(5).opcode(0, Opcode.RDMA_WRITE_WITH_IMM).immediate(0, 42)
                    .sge(mrA, 0, 512).remote(mrB.address() + 512, mrB.rkey()));
            expectCompletion(cqA, 5, WcOpcode.RDMA_WRITE);
            expectCompletion(cqB, 4, WcOpcode.RECV_RDMA_WITH_IMM);
            assertEquals(42, batch.immediate(0));
            assertArrayEquals(mrA.segment().asSlice(0, 512).toArray(JAVA_BYTE), mrB.segment().asSlice(512, 512).toArray(JAVA_BYTE));
        }
    }

    @Test
    void rdmaRead() throws Exception {
        fill(mrB, 5);
        mrA.segment().fill((byte) 0);
        try (SendRequest send = a.newSendRequest(1, 1)) {
            a.postSend(send.wrId(6).opcode(0, Opcode.RDMA_READ).sge(mrA, 0, SIZE).remote(mrB.address(), mrB.rkey()));
            expectCompletion(cqA, 6, WcOpcode.RDMA_READ);
        }
        assertArrayEquals(mrB.segment().toArray(JAVA_BYTE), mrA.segment().toArray(JAVA_BYTE));
    }

    /** The fence holds the Write back until the Read before it has landed, so it forwards the data read. */
    @Test
    void aFencedWriteForwardsWhatTheReadBeforeItBrought() throws Exception {
        fill(mrB, 6);
        mrA.segment().fill((byte) 0);
        try (SendRequest send = a.newSendRequest(2, 1)) {
            send.chain(2).wrId(0, 60).opcode(0, Opcode.RDMA_READ).sge(0, 0, mrA, 0, 1024)
                    .remote(0, mrB.address(), mrB.rkey());
            send.wrId(1, 61).opcode(1, Opcode.RDMA_WRITE).sge(1, 0, mrA, 0, 1024)
                    .remote(1, mrB.address() + 2048, mrB.rkey()).fence(1, true);
            a.postSend(send);
            long[] ids = new long[2];
            for (int seen = 0; seen < 2; ) {
                int n = cqA.pollUntil(batch, Duration.ofSeconds(10));
                for (int i = 0; i < n; i++) {
                    batch.requireSuccess(i);
                    ids[seen++] = batch.wrId(i);
                }
            }
            assertArrayEquals(new long[] {60, 61}, ids);
        }
        assertArrayEquals(mrB.segment().asSlice(0, 1024).toArray(JAVA_BYTE),
                mrB.segment().asSlice(2048, 1024).toArray(JAVA_BYTE));
    }

    @Test
    void atomicsCompareAndSwapThenFetchAndAdd() throws Exception {
        mrB.segment().set(JAVA_LONG, 0, 100L);
        try (SendRequest send = a.newSendRequest(1, 1)) {
            a.postSend(send.wrId(9).opcode(0, Opcode.ATOMIC_CMP_AND_SWP).sge(mrA, 0, 8)
                    .atomic(0, mrB.address(), mrB.rkey(), 100L, 555L));
            expectCompletion(cqA, 9, WcOpcode.COMP_SWAP);
            assertEquals(100L, mrA.segment().get(JAVA_LONG, 0), "CAS returns the old value");
            assertEquals(555L, mrB.segment().get(JAVA_LONG, 0));

            a.postSend(send.wrId(10).opcode(0, Opcode.ATOMIC_FETCH_AND_ADD).sge(mrA, 8, 8)
                    .atomic(0, mrB.address(), mrB.rkey(), 45L, 0L));
            expectCompletion(cqA, 10, WcOpcode.FETCH_ADD);
            assertEquals(555L, mrA.segment().get(JAVA_LONG, 8), "FAA returns the old value");
            assertEquals(600L, mrB.segment().get(JAVA_LONG, 0));
        }
    }

    /**
     * A region's own memory: zeroed and page-aligned as an arena's would be,
     * scoped to the region (one arena, closed before the dereg), and written
     * by the device before that.
     */
    @Test
    void allocatedMemoryIsZeroedAlignedWrittenByTheDeviceAndGoneWithItsRegion() throws Exception {
        MemoryRegion mine = pd.allocate(10_000, Access.REMOTE_WRITE);
        MemorySegment memory = mine.segment();
        assertEquals(10_000, memory.byteSize());
        assertEquals(0, memory.address() % 4096, "page-aligned");
        assertEquals(-1, memory.mismatch(MemorySegment.ofArray(new byte[10_000])), "zeroed");
        fill(mrA, 7);
        try (SendRequest send = a.newSendRequest(1, 1)) {
            a.postSend(send.wrId(70).opcode(0, Opcode.RDMA_WRITE).sge(mrA, 0, 64).remote(mine.address() + 9_000, mine.rkey()));
            expectCompletion(cqA, 70, WcOpcode.RDMA_WRITE);
        }
        assertEquals(-1, memory.asSlice(9_000, 64).mismatch(mrA.segment().asSlice(0, 64)));
        mine.close();
        assertTrue(mine.isClosed());
        assertThrows(IllegalStateException.class, () -> memory.get(JAVA_BYTE, 0), "its memory is gone with it");
    }

    @Test
    void steadyStatePostAndPollAllocateNothing() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (SendRequest send = a.newSendRequest(1, 1)) {
            send.wrId(11).opcode(0, Opcode.RDMA_WRITE).sge(mrA, 0, 64).remote(mrB.address(), mrB.rkey());
            Runnable loop = () -> {
                try {
                    for (int i = 0; i < 100_000; i++) {
                        a.postSend(send);
                        while (cqA.poll(batch) == 0) {
                            Thread.onSpinWait();
                        }
                        if (!batch.isSuccess(0)) {
                            throw new AssertionError(batch.status(0).describe());
                        }
                    }
                } catch (RdmaException e) {
                    throw new AssertionError(e);
                }
            };
            for (int warmup = 0; warmup < 3; warmup++) {
                loop.run(); // let the JIT compile the path (slow under TCG)
            }
            threads.getCurrentThreadAllocatedBytes(); // its own first call may allocate
            long before = threads.getCurrentThreadAllocatedBytes();
            loop.run();
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            System.out.println("allocation test: 100000 post+poll iterations allocated " + allocated + " bytes");
            assertEquals(0, allocated, "bytes allocated by 100k post+poll iterations");
        }
    }

    @Test
    void postingTooMuchIsAClearError() throws Exception {
        try (SendRequest send = a.newSendRequest(1, 2)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> send.sge(0, 0, mrA, 0, 100).inline(0, true));
            assertTrue(e.getMessage().contains("max_inline_data"), e.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> send.sge(0, 0, mrA, SIZE - 10, 100));
            assertThrows(IndexOutOfBoundsException.class, () -> send.sge(0, 2, mrA, 0, 1));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> pd.createQueuePair(QueuePairConfig.rc(cqA).withQueueDepth(Integer.MAX_VALUE, 1)));
        assertTrue(e.getMessage().contains("max_qp_wr"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ctx.createCompletionQueue(0));
        assertThrows(IllegalArgumentException.class, () -> pd.allocate(0));
        assertThrows(IllegalArgumentException.class, () -> pd.register(MemorySegment.ofArray(new byte[16])));
    }

    @Test
    void unsignaledWritesCompleteSilently() throws Exception {
        // A post list of four writes on a QP that signals only flagged WRs: only the last is.
        CompletionQueue cq1 = ctx.createCompletionQueue(16);
        CompletionQueue cq2 = ctx.createCompletionQueue(16);
        QueuePair x = pd.createQueuePair(QueuePairConfig.rc(cq1).withSignalAll(false));
        QueuePair y = pd.createQueuePair(QueuePairConfig.rc(cq2));
        try (CompletionBatch many = cq1.newBatch(8)) {
            LabDevices.connect(x, y, Access.REMOTE_WRITE);
            fill(mrA, 7);
            try (SendRequest list = x.newSendRequest(4, 1)) {
                for (int i = 0; i < 4; i++) {
                    list.wrId(i, 200 + i).opcode(i, Opcode.RDMA_WRITE).sge(i, 0, mrA, i * 1024L, 1024)
                            .remote(i, mrB.address() + i * 1024L, mrB.rkey()).signaled(i, i == 3);
                }
                x.postSend(list.chain(4));
                assertEquals(1, cq1.pollUntil(many, Duration.ofSeconds(10)));
                many.requireSuccess(0);
                assertEquals(203, many.wrId(0), "only the signaled WR completes");
                Thread.sleep(100);
                assertEquals(0, cq1.poll(many), "no completions for unsignaled WRs");
            }
            assertArrayEquals(mrA.segment().toArray(JAVA_BYTE), mrB.segment().toArray(JAVA_BYTE));
        } finally {
            x.close();
            y.close();
            cq1.close();
            cq2.close();
        }
    }

    @Test
    void aWrongRkeyIsARemoteAccessErrorWithVerbsText() throws Exception {
        CompletionQueue cq1 = ctx.createCompletionQueue(16);
        CompletionQueue cq2 = ctx.createCompletionQueue(16);
        QueuePair x = pd.createQueuePair(QueuePairConfig.rc(cq1));
        QueuePair y = pd.createQueuePair(QueuePairConfig.rc(cq2));
        try (CompletionBatch one = cq1.newBatch(1)) {
            LabDevices.connect(x, y, Access.REMOTE_WRITE);
            try (SendRequest bad = x.newSendRequest(1, 1)) {
                x.postSend(bad.wrId(9).opcode(0, Opcode.RDMA_WRITE).sge(mrA, 0, 64)
                        .remote(mrB.address(), mrB.rkey() ^ 0x5a5a00));
                assertEquals(1, cq1.pollUntil(one, Duration.ofSeconds(30)));
                assertEquals(WcStatus.REM_ACCESS_ERR, one.status(0));
                WorkCompletionException e = assertThrows(WorkCompletionException.class, () -> one.requireSuccess(0));
                assertTrue(e.getMessage().contains("IBV_WC_REM_ACCESS_ERR (remote access error)"), e.getMessage());
                assertEquals(QpState.ERR, x.state(), "the requester QP goes to the error state");
            }
        } finally {
            x.close();
            y.close();
            cq1.close();
            cq2.close();
        }
    }

    @Test
    void closingACqInUseIsRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> cqA.close());
        assertTrue(e.getMessage().contains("still used by QueuePair"), e.getMessage());
    }
}
