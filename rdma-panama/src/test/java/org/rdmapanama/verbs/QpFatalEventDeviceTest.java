package org.rdmapanama.verbs;

import org.junit.jupiter.api.Tag;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.FaultRig.CmPair;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link QueuePair#fatalEvent()}: what faults the soft devices report as an
 * asynchronous QP event (most report none: the fault comes as an error
 * completion), and the parts that hold without one.
 */
@Tag("device")
class QpFatalEventDeviceTest {
    private static final Duration T = Duration.ofSeconds(10);

    static void report(String device, String fault, Object client, Object server) {
        System.out.println("QP-EVENT " + device + " | " + fault + " | client: " + client + " | server: " + server);
    }

    /** What came of a future within {@code millis}: the event, the exception, or "none". */
    private static String outcome(CompletableFuture<AsyncEventType> f, long millis) throws InterruptedException {
        try {
            return String.valueOf(f.get(millis, TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().toString();
        }
    }

    /**
     * A remote access error, then the peer's close, on a connection rdma_cm made
     * (its QPs come through the cm bridge). Whether a device reports the fault
     * as an async event is its choice (rxe and siw report none: the requester
     * gets an error completion, or on iWARP a success); what it reports must
     * be a fatal QP event, and the close must complete the future.
     */
    @OnEveryLabTransport
    void aRemoteAccessErrorThenThePeersClose(Transport transport) throws Exception {
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), 4096);
             CompletionBatch batch = new CompletionBatch(4);
             SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
            CompletableFuture<AsyncEventType> client = p.client().queuePair().fatalEvent();
            CompletableFuture<AsyncEventType> server = p.server().queuePair().fatalEvent();
            p.client().queuePair().postSend(wr.wrId(1).opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, 64)
                    .remote(p.atServer().address(), p.atServer().rkey() ^ 0x5a5a00));
            int n = p.client().completionQueue().pollUntil(batch, T);
            String wc = n == 0 ? "no completion" : batch.status(0).toString();
            String atClient = outcome(client, 2000);
            String atServer = outcome(server, 500);
            report(LabDevices.select(transport).device().name(), "RDMA Write with a bad rkey; completion " + wc,
                    atClient, atServer);
            for (CompletableFuture<AsyncEventType> f : List.of(client, server)) {
                if (f.isDone() && !f.isCompletedExceptionally()) {
                    AsyncEventType t = f.getNow(null);
                    assertTrue(t.isQpFatal() || t == AsyncEventType.DEVICE_FATAL, "not a fatal event: " + t);
                }
            }
            p.server().close();
            report(LabDevices.select(transport).device().name(), "then the server closes",
                    outcome(client, 2000), outcome(server, 100));
            try {
                AsyncEventType t = server.get(1, TimeUnit.SECONDS); // an event before the close stays
                assertTrue(t.isQpFatal() || t == AsyncEventType.DEVICE_FATAL, "not a fatal event: " + t);
            } catch (ExecutionException closed) {
                assertInstanceOf(ClosedResourceException.class, closed.getCause());
            }
        }
    }

    /** Without an event, a close completes it exceptionally, so that nothing waits on it forever. */
    @OnEveryLabTransport
    void aCloseWithoutAnEventCompletesItExceptionally(Transport transport) throws Exception {
        try (DeviceContext ctx = LabDevices.open(transport)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            QueuePair qp = pd.createQueuePair(QueuePairConfig.rc(ctx.createCompletionQueue(16)));
            CompletableFuture<AsyncEventType> fatal = qp.fatalEvent();
            CompletableFuture<AsyncEventType> other = qp.fatalEvent();
            other.cancel(false); // a caller's own copy: the others do not see it
            qp.toInit(ctx.selection().port().number());
            qp.toError(); // an error the application asked for is no async event
            assertThrows(TimeoutException.class, () -> fatal.get(200, TimeUnit.MILLISECONDS));
            assertFalse(qp.fatalEvent().isDone());
            qp.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> fatal.get(1, TimeUnit.SECONDS));
            assertInstanceOf(ClosedResourceException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("QueuePair"), e.getCause().getMessage());
            assertTrue(qp.fatalEvent().isCompletedExceptionally());
            // The watcher's mapping: a QP's fatal events reach that QP, DEVICE_FATAL every open QP.
            QueuePair x = pd.createQueuePair(QueuePairConfig.rc(ctx.createCompletionQueue(16)));
            QueuePair y = pd.createQueuePair(QueuePairConfig.rc(ctx.createCompletionQueue(16)));
            AsyncEventWatcher w = ctx.events();
            long at = x.qp().address();
            assertEquals(List.of(x), w.fatalTargets(AsyncEventType.QP_FATAL, at));
            assertEquals(List.of(x), w.fatalTargets(AsyncEventType.QP_REQ_ERR, at));
            assertEquals(List.of(x), w.fatalTargets(AsyncEventType.QP_ACCESS_ERR, at));
            assertEquals(List.of(), w.fatalTargets(AsyncEventType.COMM_EST, at));
            assertEquals(List.of(), w.fatalTargets(AsyncEventType.QP_FATAL, qp.qp().address()), "closed: unregistered");
            assertEquals(Set.of(x, y), Set.copyOf(w.fatalTargets(AsyncEventType.DEVICE_FATAL, 0)));
            CompletableFuture<AsyncEventType> xs = x.fatalEvent();
            x.fatal(AsyncEventType.QP_FATAL);
            x.fatal(AsyncEventType.DEVICE_FATAL); // once: the first event stays
            assertEquals(AsyncEventType.QP_FATAL, xs.getNow(null));
            assertEquals(AsyncEventType.QP_FATAL, x.fatalEvent().getNow(null));
            assertFalse(y.fatalEvent().isDone());
        }
    }
}
