package org.rdmapanama.verbs;

import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What iWARP lacks is refused before anything is posted, with the reason read from the device. */
@Tag("device")
class IwarpRefusalDeviceTest {
    static DeviceContext ctx;
    static QueuePair qp;
    static MemoryRegion mr;

    @BeforeAll
    static void open() throws Exception {
        ctx = LabDevices.open(Transport.IWARP);
        assertEquals(Transport.IWARP, ctx.transport());
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(16);
        int sges = Math.min(2, ctx.capabilities().maxSge());
        qp = pd.createQueuePair(QueuePairConfig.rc(cq).withSge(sges, 1));
        mr = pd.allocate(4096);
    }

    @AfterAll
    static void close() throws Exception {
        if (ctx != null) {
            ctx.close();
        }
    }

    @Test
    void atomicsAreRefusedBecauseAtomicCapIsNone() {
        assertEquals(AtomicCapability.NONE, ctx.capabilities().atomicCap());
        try (SendRequest send = qp.newSendRequest(1, 1)) {
            TransportCapabilityException e = assertThrows(TransportCapabilityException.class,
                    () -> send.opcode(0, Opcode.ATOMIC_CMP_AND_SWP));
            assertTrue(e.getMessage().contains("atomic_cap NONE"), e.getMessage());
            for (Opcode op : Opcode.values()) {
                if (op.isAtomic()) {
                    assertThrows(TransportCapabilityException.class, () -> send.opcode(0, op), op.name());
                }
            }
        }
    }

    @Test
    void immediateDataIsRefused() {
        try (SendRequest send = qp.newSendRequest(1, 1)) {
            for (Opcode op : Opcode.values()) {
                if (op.hasImmediate()) {
                    assertThrows(TransportCapabilityException.class, () -> send.opcode(0, op), op.name());
                }
            }
            TransportCapabilityException e = assertThrows(TransportCapabilityException.class, () -> send.immediate(0, 1));
            assertTrue(e.getMessage().contains("iWARP"), e.getMessage());
        }
    }

    @Test
    void rdmaReadSgesAreLimitedByMaxSgeRd() {
        int maxRd = ctx.capabilities().maxSgeRd();
        int sges = Math.min(2, ctx.capabilities().maxSge());
        try (SendRequest send = qp.newSendRequest(1, sges)) {
            send.opcode(0, Opcode.RDMA_READ).sge(0, 0, mr, 0, 8);
            if (maxRd < sges) {
                TransportCapabilityException e = assertThrows(TransportCapabilityException.class,
                        () -> send.sge(0, 1, mr, 8, 8));
                assertTrue(e.getMessage().contains("max_sge_rd"), e.getMessage());
                // and the other order: two SGEs first, then the opcode
                send.opcode(0, Opcode.SEND).sge(0, 1, mr, 8, 8);
                assertThrows(TransportCapabilityException.class, () -> send.opcode(0, Opcode.RDMA_READ));
            }
        }
    }

    @Test
    void udQueuePairsAreRefused() throws Exception {
        ProtectionDomain pd = qp.protectionDomain();
        CompletionQueue cq = qp.config().sendCq();
        TransportCapabilityException e = assertThrows(TransportCapabilityException.class,
                () -> pd.createQueuePair(QueuePairConfig.ud(cq)));
        assertTrue(e.getMessage().contains("RC only"), e.getMessage());
    }
}
