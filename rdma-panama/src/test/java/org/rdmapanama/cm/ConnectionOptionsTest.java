package org.rdmapanama.cm;

import org.junit.jupiter.api.Test;
import org.rdmapanama.verbs.QueuePairCaps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The connection options carry the one model of a QP's queues, and refuse what no connection could use. */
class ConnectionOptionsTest {
    @Test
    void theQueuesAreTheQueuePairsCaps() {
        ConnectionOptions o = ConnectionOptions.defaults().withSge(2, 3).withInline(64).withSignalAll(false);
        assertEquals(new QueuePairCaps(64, 64, 2, 3, 64, false), o.caps());
        assertEquals(64, o.sendDepth());
        assertEquals(3, o.recvSge());
        ConnectionOptions deeper = o.withDepth(200, 100);
        assertEquals(300, deeper.cqSize(), "the CQ grows to hold both queues");
        assertEquals(200, deeper.caps().sendWr());
    }

    @Test
    void readDepthRetriesAndTheCqAreChecked() {
        assertEquals(16, ConnectionOptions.defaults().withRdmaReadDepth(16).rdmaReadDepth());
        String e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionOptions.defaults().withRdmaReadDepth(256)).getMessage();
        assertTrue(e.contains("rdmaReadDepth must be 0..255, got 256"), e);
        e = assertThrows(IllegalArgumentException.class, () -> ConnectionOptions.defaults().withRetry(8)).getMessage();
        assertTrue(e.contains("retryCount"), e);
        e = assertThrows(IllegalArgumentException.class,
                () -> new ConnectionOptions(64, 64, 1, 1, 0, 100, 1, 7, 7)).getMessage();
        assertTrue(e.contains("cqSize 100 cannot hold sendDepth 64 + recvDepth 64"), e);
        e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionOptions.defaults().withSge(0, 1)).getMessage();
        assertTrue(e.contains("SGEs per send must be 1..1024, got 0"), e);
    }
}
