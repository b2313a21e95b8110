package org.rdmapanama.verbs;

import org.rdmapanama.device.Gid;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** UD queue pairs with address handles, and a shared receive queue, on the RoCE device. */
@Tag("device")
class UdAndSrqDeviceTest {
    static final Duration T = Duration.ofSeconds(10);
    /** A UD receive starts with the 40-byte GRH (present on RoCE). */
    static final int GRH = 40;

    @Test
    void udSendReachesTheAddressedQpWithAGrh() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2);
             CompletionBatch batch = new CompletionBatch(4)) {
            Selection s = ctx.selection(); // the port and RoCEv2 GID selection picked
            int port = s.port().number(), gid = s.gidIndex();
            byte[] gidBytes = s.gid().raw();
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            QueuePair a = pd.createQueuePair(QueuePairConfig.ud(cq));
            QueuePair b = pd.createQueuePair(QueuePairConfig.ud(cq));
            for (QueuePair qp : new QueuePair[] {a, b}) {
                qp.toInit(port);
                qp.toRtr(new QpAddress(0, 0, 0, new byte[16]), port, gid, 1024);
                qp.toRts(0);
            }
            MemoryRegion mr = pd.allocate(4096);
            for (int i = 0; i < 200; i++) {
                mr.segment().set(JAVA_BYTE, i, (byte) (i + 3));
            }
            AddressHandle toB = AddressHandle.create(pd, new QpAddress(0, b.qpNumber(), 0, gidBytes), port, gid);
            try (ReceiveRequest recv = b.newReceiveRequest(1, 1); SendRequest send = a.newSendRequest(1, 1)) {
                b.postRecv(recv.wrId(5).sge(mr, 1024, GRH + 200));
                a.postSend(send.wrId(6).sge(mr, 0, 200).ud(0, toB, b.qpNumber(), QueuePair.DEFAULT_QKEY));
                int seen = 0;
                long deadline = System.nanoTime() + T.toNanos();
                while (seen < 2 && System.nanoTime() < deadline) {
                    int n = cq.poll(batch);
                    for (int i = 0; i < n; i++, seen++) {
                        batch.requireSuccess(i);
                        if (batch.wrId(i) == 5) {
                            assertEquals(WcOpcode.RECV, batch.opcode(i));
                            assertEquals(GRH + 200, batch.byteLength(i));
                            assertEquals(a.qpNumber(), batch.sourceQp(i));
                        }
                    }
                }
                assertEquals(2, seen, "send and receive completions");
                for (int i = 0; i < 200; i++) {
                    assertEquals((byte) (i + 3), mr.segment().get(JAVA_BYTE, 1024 + GRH + i), "byte " + i);
                }
                // UD sends only: every operation on a remote buffer is refused before posting
                for (Opcode op : Opcode.values()) {
                    if (op.isRemote()) {
                        assertThrows(TransportCapabilityException.class, () -> send.opcode(0, op), op.name());
                    } else if (!op.hasImmediate()) {
                        send.opcode(0, op);
                    }
                }
            }
        }
    }

    @Test
    void aSharedReceiveQueueFeedsItsQueuePair() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2);
             CompletionBatch batch = new CompletionBatch(4)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1);
            QueuePair sender = pd.createQueuePair(QueuePairConfig.rc(cq));
            QueuePair receiver = pd.createQueuePair(QueuePairConfig.rc(cq).withSrq(srq));
            LabDevices.connect(sender, receiver);
            MemoryRegion mr = pd.allocate(4096);
            mr.segment().setString(0, "via the SRQ");
            assertThrows(IllegalStateException.class, () -> receiver.newReceiveRequest(1, 1));
            try (ReceiveRequest recv = srq.newReceiveRequest(1, 1); SendRequest send = sender.newSendRequest(1, 1)) {
                srq.postRecv(recv.wrId(1).sge(mr, 2048, 64));
                sender.postSend(send.wrId(2).sge(mr, 0, 12));
                int got = 0;
                long deadline = System.nanoTime() + T.toNanos();
                while (got < 2 && System.nanoTime() < deadline) {
                    int n = cq.poll(batch);
                    for (int i = 0; i < n; i++, got++) {
                        batch.requireSuccess(i);
                        if (batch.wrId(i) == 1) {
                            assertEquals(receiver.qpNumber(), batch.qpNumber(i));
                        }
                    }
                }
                assertEquals(2, got);
                assertEquals("via the SRQ", mr.segment().getString(2048));
            }
            IllegalStateException busy = assertThrows(IllegalStateException.class, srq::close);
            assertEquals(true, busy.getMessage().contains("still used by QueuePair"), busy.getMessage());
        }
    }
}
