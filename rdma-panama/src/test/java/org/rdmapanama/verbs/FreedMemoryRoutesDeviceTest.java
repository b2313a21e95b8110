package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Gid;
import org.rdmapanama.device.Transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ways a reusable work request could hand the provider freed memory, on
 * real devices: each is refused before anything is posted.
 */
@Tag("device")
class FreedMemoryRoutesDeviceTest {
    @OnEveryLabTransport
    void aReceiveRequestIsPostedOnlyByTheQueuePairThatOwnsItsMemory(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(64);
            QueuePair sibling = pd.createQueuePair(QueuePairConfig.rc(cq));
            QueuePair qp = pd.createQueuePair(QueuePairConfig.rc(cq));
            MemoryRegion mr = pd.allocate(4096);
            ReceiveRequest siblings = sibling.newReceiveRequest(1, 1).sge(mr, 0, 64);
            sibling.close(); // frees the WR memory that `siblings` points into
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> qp.postRecv(siblings));
            assertTrue(e.getMessage().contains("built for QueuePair"), e.getMessage());
            // Even while the sibling is open: its memory is not this QP's to keep alive.
            QueuePair other = pd.createQueuePair(QueuePairConfig.rc(cq));
            ReceiveRequest others = other.newReceiveRequest(1, 1).sge(mr, 0, 64);
            assertThrows(IllegalArgumentException.class, () -> qp.postRecv(others));
            if (ctx.capabilities().maxSrq() > 0) {
                SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1);
                SharedReceiveQueue srq2 = pd.createSharedReceiveQueue(8, 1);
                ReceiveRequest srqs = srq.newReceiveRequest(1, 1).sge(mr, 0, 64);
                srq.close();
                assertThrows(IllegalArgumentException.class, () -> srq2.postRecv(srqs));
                assertThrows(IllegalArgumentException.class, () -> qp.postRecv(srqs));
                assertThrows(IllegalArgumentException.class, () -> srq2.postRecv(others));
            }
        }
    }

    /** An address handle a UD send request points at cannot be freed under it (UD: RoCEv2 only; iWARP is RC only). */
    @Test
    void anAddressHandleStaysOpenWhileASendRequestPointsAtIt() throws Exception {
        try (DeviceContext ctx = LabDevices.open(Transport.ROCE_V2)) {
            Gid gid = LabDevices.roceV2Ipv4Gid(ctx);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            QueuePair qp = pd.createQueuePair(QueuePairConfig.ud(cq));
            QueuePair peer = pd.createQueuePair(QueuePairConfig.ud(cq));
            QpAddress to = new QpAddress(0, peer.qpNumber(), 0, gid.raw());
            AddressHandle first = AddressHandle.create(pd, to, 1, gid.index());
            AddressHandle second = AddressHandle.create(pd, to, 1, gid.index());
            SendRequest send = qp.newSendRequest(1, 1).ud(0, first, peer.qpNumber(), QueuePair.DEFAULT_QKEY);

            ResourceInUseException e = assertThrows(ResourceInUseException.class, first::close);
            assertTrue(e.getMessage().contains("WR 0 of a SendRequest of QueuePair UD"), e.getMessage());
            assertFalse(first.isClosed());

            send.ud(0, second, peer.qpNumber(), QueuePair.DEFAULT_QKEY); // the WR lets go of `first`
            first.close();
            assertThrows(ResourceInUseException.class, second::close);
            assertThrows(ClosedResourceException.class,
                    () -> send.ud(0, first, peer.qpNumber(), QueuePair.DEFAULT_QKEY));

            send.close(); // a closed request holds nothing, and cannot be posted
            assertThrows(ClosedResourceException.class, () -> qp.postSend(send));
            second.close();

            // Closing the QP lets go too; the PD then closes everything in one call.
            AddressHandle third = AddressHandle.create(pd, to, 1, gid.index());
            qp.newSendRequest(1, 1).ud(0, third, peer.qpNumber(), QueuePair.DEFAULT_QKEY);
            pd.close(); // the AH is newer than the QP: refused on the first pass, closed after the QP
            assertTrue(third.isClosed() && qp.isClosed());
            assertEquals(false, cq.isClosed());
        }
    }
}
