package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * perftest's {@code -R} exchange on the lab's devices, where a peer leaves as
 * perftest does: right after it has read our last block. The receive we keep
 * posted is then flushed, and it can show in the same poll as that block's
 * Send completion; the Send has still succeeded.
 */
@Tag("device")
class PerftestCmExchangeDeviceTest {
    private static final Duration T = Duration.ofSeconds(20);

    @OnEveryLabTransport
    void aPeerLeavingRightAfterOurLastBlockDoesNotFailItsSend(Transport transport) throws Exception {
        Selection s = LabDevices.select(transport);
        InetSocketAddress at = new InetSocketAddress(s.ipAddress(), LabPorts.next());
        ConnectionOptions opts = ConnectionOptions.defaults();
        byte[] hello = {1, 2, 3, 4, 5, 6, 7, 8}, last = {8, 7, 6, 5, 4, 3, 2, 1};
        try (RdmaListener listener = RdmaListener.bind(at, 1, opts)) {
            CompletableFuture<PerftestCmExchange> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    RdmaConnection c = listener.accept(T);
                    PerftestCmExchange x = new PerftestCmExchange(c, false, 0);
                    c.accept(new byte[0], T);
                    return x;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            PerftestCmExchange server;
            try (PerftestCmExchange client = new PerftestCmExchange(RdmaConnection.resolve(at, null, opts, T), true, 0)) {
                client.connection().connect(new byte[0], T); // returns once the server has accepted
                server = accepted.get(30, TimeUnit.SECONDS);
                try {
                    client.write(hello);
                    assertArrayEquals(hello, server.read(hello.length, T));
                    server.post(last);
                    assertArrayEquals(last, client.read(last.length, T));
                } catch (Throwable t) {
                    server.close();
                    throw t;
                }
            }
            try (server) {
                // The client has disconnected and closed: our posted receive is flushed, unpolled, behind the Send.
                assertTrue(server.connection().awaitDisconnect(T), "the client's disconnect arrives");
                server.awaitSent();
                RdmaException e = assertThrows(RdmaException.class, () -> server.read(hello.length, T));
                assertTrue(e.getMessage().contains("the exchange connection failed: IBV_WC_WR_FLUSH_ERR"), e.getMessage());
            }
        }
    }
}
