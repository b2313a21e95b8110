package org.rdmapanama.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.FaultRig.CmPair;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one-buffer repost, {@link QueuePair#postRecv(MemoryRegion, long, int, long)}
 * and its {@link SharedReceiveQueue} twin: a Send lands at the offset posted,
 * completing with the wrId posted; buffers outside the region and closed
 * objects are refused before anything reaches the provider.
 */
@Tag("device")
class ReceiveRepostDeviceTest {
    private static final Duration T = Duration.ofSeconds(10);

    @OnEveryLabTransport
    void aSendLandsAtThePostedOffsetWithThePostedWrId(Transport transport) throws Exception {
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), 4096);
             SendRequest send = p.client().queuePair().newSendRequest(1, 1);
             CompletionBatch batch = new CompletionBatch(4)) {
            RdmaConnection server = p.server();
            server.queuePair().postRecv(p.serverMr(), 1024, 64, 1001);
            server.queuePair().postRecv(p.serverMr(), 3000, 8, 1002);
            for (long i = 0; i < 2; i++) {
                p.clientMr().segment().set(JAVA_LONG, 0, 0xabc0L + i);
                p.client().queuePair().postSend(send.wrId(i).opcode(0, Opcode.SEND).sge(p.clientMr(), 0, 8));
                assertEquals(1, p.client().completionQueue().pollUntil(batch, T));
                batch.requireSuccess(0);
            }
            long got = 0;
            while (got < 2) {
                int n = server.completionQueue().pollUntil(batch, T);
                assertTrue(n > 0, "receive " + got + " completed within " + T);
                for (int i = 0; i < n; i++, got++) {
                    batch.requireSuccess(i);
                    assertEquals(1001 + got, batch.wrId(i), "in the order posted");
                    assertEquals(WcOpcode.RECV, batch.opcode(i));
                    assertEquals(8, batch.byteLength(i));
                }
            }
            assertEquals(0xabc0L, p.serverMr().segment().get(JAVA_LONG, 1024));
            assertEquals(0xabc1L, p.serverMr().segment().get(JAVA_LONG, 3000));
            assertEquals(0L, p.serverMr().segment().get(JAVA_LONG, 0), "nothing landed elsewhere");
        }
    }

    @OnEveryLabTransport
    void buffersOutsideTheRegionAndClosedObjectsAreRefused(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            QueuePair qp = pd.createQueuePair(QueuePairConfig.rc(cq));
            qp.toInit(ctx.selection().port().number());
            MemoryRegion mr = pd.allocate(4096);
            for (long[] bad : new long[][] {{-1, 8}, {0, -1}, {4090, 8}, {4097, 0}, {Long.MAX_VALUE, 8}}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> qp.postRecv(mr, bad[0], (int) bad[1], 1));
                assertTrue(e.getMessage().contains("is outside MemoryRegion"), e.getMessage());
            }
            qp.postRecv(mr, 4088, 8, 1); // the last 8 bytes: inside
            qp.postRecv(mr, 4096, 0, 2); // empty, at the end: inside

            MemoryRegion gone = pd.allocate(4096);
            gone.close();
            assertThrows(ClosedResourceException.class, () -> qp.postRecv(gone, 0, 8, 3));
            qp.close();
            assertThrows(ClosedResourceException.class, () -> qp.postRecv(mr, 0, 8, 4));
        }
    }

    /** On RoCE, whose QPs connect out of band: the SRQ's twin delivers, refuses the same, and a QP on an SRQ refuses. */
    @Test
    void theSharedReceiveQueueTwin() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2);
             CompletionBatch batch = new CompletionBatch(4)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1);
            QueuePair sender = pd.createQueuePair(QueuePairConfig.rc(cq));
            QueuePair receiver = pd.createQueuePair(QueuePairConfig.rc(cq).withSrq(srq));
            LabDevices.connect(sender, receiver);
            MemoryRegion mr = pd.allocate(4096);
            assertThrows(IllegalStateException.class, () -> receiver.postRecv(mr, 0, 8, 1));
            assertThrows(IllegalArgumentException.class, () -> srq.postRecv(mr, 4095, 2, 1));
            mr.segment().set(JAVA_LONG, 0, 0x5eedL);
            srq.postRecv(mr, 2048, 64, 77);
            try (SendRequest send = sender.newSendRequest(1, 1)) {
                sender.postSend(send.wrId(78).opcode(0, Opcode.SEND).sge(mr, 0, 8));
            }
            int got = 0;
            long deadline = System.nanoTime() + T.toNanos();
            while (got < 2 && System.nanoTime() < deadline) {
                int n = cq.poll(batch);
                for (int i = 0; i < n; i++, got++) {
                    batch.requireSuccess(i);
                    if (batch.opcode(i) == WcOpcode.RECV) {
                        assertEquals(77, batch.wrId(i));
                        assertEquals(receiver.qpNumber(), batch.qpNumber(i));
                    }
                }
            }
            assertEquals(2, got);
            assertEquals(0x5eedL, mr.segment().get(JAVA_LONG, 2048));
            receiver.close();
            srq.close();
            assertThrows(ClosedResourceException.class, () -> srq.postRecv(mr, 0, 8, 1));
        }
    }
}
