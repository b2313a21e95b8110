package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Transport;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Use after close, close order and close races, on both lab devices. */
@Tag("device")
class ResourceLifecycleDeviceTest {
    @OnEveryLabTransport
    void useAfterCloseThrows(Transport transport) throws Exception {
        DeviceContext ctx = LabDevices.open(transport);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(16);
        QueuePair qp = pd.createQueuePair(QueuePairConfig.rc(cq));
        MemoryRegion mr = pd.allocate(4096);
        SendRequest send = qp.newSendRequest(1, 1).sge(mr, 0, 8);
        CompletionBatch batch = new CompletionBatch(4);

        qp.close();
        qp.close(); // idempotent
        assertTrue(qp.isClosed());
        ClosedResourceException e = assertThrows(ClosedResourceException.class, () -> qp.postSend(send));
        assertTrue(e.getMessage().contains("QueuePair"), e.getMessage());
        assertThrows(ClosedResourceException.class, () -> qp.state());

        ctx.close(); // closes MR, CQ, PD (newest first), then the device
        assertTrue(mr.isClosed() && cq.isClosed() && pd.isClosed());
        assertThrows(ClosedResourceException.class, () -> cq.poll(batch));
        assertThrows(ClosedResourceException.class, () -> pd.allocate(64));
        assertThrows(ClosedResourceException.class, () -> ctx.allocateProtectionDomain());
        // Memory the region owned is gone with it: reading it is an exception, not a crash.
        assertThrows(IllegalStateException.class, () -> mr.segment().get(JAVA_BYTE, 0));
        send.close();
        batch.close();
    }

    @Test
    void closeRacingWithPollingNeverCrashes() throws Exception {
        for (int round = 0; round < 20; round++) {
            DeviceContext ctx = LabDevices.open(Transport.ROCE_V2);
            CompletionQueue cq = ctx.createCompletionQueue(16);
            CompletionBatch batch = new CompletionBatch(4);
            CountDownLatch started = new CountDownLatch(1);
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            Thread poller = Thread.ofPlatform().start(() -> {
                started.countDown();
                try {
                    while (true) {
                        cq.poll(batch);
                    }
                } catch (ClosedResourceException expected) {
                    // the only way out
                } catch (Throwable t) {
                    unexpected.set(t);
                }
            });
            started.await();
            ctx.close(); // waits for the poll in progress to return, then frees the CQ
            poller.join(10_000);
            assertEquals(null, unexpected.get());
            assertTrue(!poller.isAlive(), "poller must see the close");
            batch.close();
        }
    }
}
