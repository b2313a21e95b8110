package org.rdmapanama.cm;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;
import org.rdmapanama.verbs.SharedReceiveQueue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connections on one PD and CQ per side (a context from {@link CmContexts}):
 * Sends between several pairs arrive on the one CQ with the right QP numbers,
 * an SRQ feeds every QP made with it, closing one connection leaves the
 * others and the shared objects working; {@link RdmaConnection#ended()}.
 */
@Tag("device")
class SharedResourcesDeviceTest {
    private static final Duration T = Duration.ofSeconds(30);
    private static final int SLOT = 256;

    /** A client and the server side the listener made for it. */
    private record Pair(RdmaConnection client, RdmaConnection server) implements AutoCloseable {
        @Override
        public void close() throws RdmaException {
            client.close();
            server.close();
        }
    }

    /** Connects one pair; {@code beforeAccept} runs on the server side (e.g. posts its receive). */
    private static Pair connect(RdmaListener listener, SharedResources server, SharedResources client,
                                RecvSetup beforeAccept) throws Exception {
        CompletableFuture<RdmaConnection> requested = listener.acceptAsync(T, server);
        RdmaConnection c = RdmaConnection.resolve(listener.address(), null, ConnectionOptions.defaults(), T, client);
        CompletableFuture<RdmaConnection> connected = c.connectAsync(new byte[0], T);
        RdmaConnection s = requested.get(30, TimeUnit.SECONDS);
        beforeAccept.run(s);
        s.accept(new byte[0], T);
        connected.get(30, TimeUnit.SECONDS);
        return new Pair(c, s);
    }

    @FunctionalInterface
    private interface RecvSetup {
        void run(RdmaConnection server) throws Exception;
    }

    /** Each client sends 64 bytes (pattern {@code round}) from its slot; each server side must get its own. */
    private static void exchange(List<Pair> pairs, List<Integer> live, MemoryRegion clientMr, MemoryRegion serverMr,
                                 CompletionQueue serverCq, CompletionQueue clientCq, int round) throws Exception {
        try (CompletionBatch batch = new CompletionBatch(16)) {
            for (int i : live) {
                Pair p = pairs.get(i);
                try (ReceiveRequest r = p.server().queuePair().newReceiveRequest(1, 1)) {
                    p.server().queuePair().postRecv(r.wrId(i).sge(serverMr, (long) i * SLOT, SLOT));
                }
                for (int j = 0; j < 64; j++) {
                    clientMr.segment().set(JAVA_BYTE, (long) i * SLOT + j, (byte) (i * 31 + j + round));
                }
                try (SendRequest s = p.client().queuePair().newSendRequest(1, 1)) {
                    p.client().queuePair().postSend(s.wrId(i).opcode(0, Opcode.SEND).sge(clientMr, (long) i * SLOT, 64));
                }
            }
            Map<Integer, Integer> sentBy = drain(clientCq, batch, live.size());
            Map<Integer, Integer> receivedBy = drain(serverCq, batch, live.size());
            for (int i : live) {
                assertEquals(pairs.get(i).client().queuePair().qpNumber(), sentBy.get(i), "send completion " + i + "'s QP");
                assertEquals(pairs.get(i).server().queuePair().qpNumber(), receivedBy.get(i), "receive " + i + "'s QP");
                for (int j = 0; j < 64; j++) {
                    assertEquals((byte) (i * 31 + j + round), serverMr.segment().get(JAVA_BYTE, (long) i * SLOT + j),
                            "byte " + j + " of connection " + i);
                }
            }
        }
    }

    /** {@code n} successful completions from {@code cq}: wr_id to QP number. */
    private static Map<Integer, Integer> drain(CompletionQueue cq, CompletionBatch batch, int n) throws Exception {
        Map<Integer, Integer> qpOf = new HashMap<>();
        while (qpOf.size() < n) {
            int got = cq.pollUntil(batch, T);
            assertTrue(got > 0, "completions: " + qpOf.size() + " of " + n);
            for (int k = 0; k < got; k++) {
                batch.requireSuccess(k);
                qpOf.put((int) batch.wrId(k), batch.qpNumber(k));
            }
        }
        return qpOf;
    }

    @OnEveryLabTransport
    void fourConnectionsShareOnePdAndOneCqPerSide(Transport t) throws Exception {
        Selection sel = LabDevices.select(t);
        Map<String, Integer> before = LeakCheck.counts();
        InetSocketAddress at = new InetSocketAddress(sel.ipAddress(), LabPorts.next());
        try (DeviceContext ctx = CmContexts.open(sel.device().name());
             RdmaListener listener = RdmaListener.bind(at, 8, ConnectionOptions.defaults())) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue serverCq = ctx.createCompletionQueue(512);
            CompletionQueue clientCq = ctx.createCompletionQueue(512);
            SharedResources server = new SharedResources(pd, serverCq);
            SharedResources client = new SharedResources(pd, clientCq);
            MemoryRegion serverMr = pd.allocate(8 * SLOT);
            MemoryRegion clientMr = pd.allocate(8 * SLOT);
            List<Pair> pairs = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    pairs.add(connect(listener, server, client, s -> { }));
                    assertSame(pd, pairs.get(i).client().protectionDomain());
                    assertSame(serverCq, pairs.get(i).server().completionQueue());
                }
                exchange(pairs, List.of(0, 1, 2, 3), clientMr, serverMr, serverCq, clientCq, 0);

                pairs.get(0).close();
                assertEquals(ConnectionEnd.Reason.CLOSED, pairs.get(0).client().ended().get(1, TimeUnit.SECONDS).reason());
                exchange(pairs, List.of(1, 2, 3), clientMr, serverMr, serverCq, clientCq, 1);
                pairs.add(connect(listener, server, client, s -> { })); // a new one on the same shared objects
                exchange(pairs, List.of(1, 2, 3, 4), clientMr, serverMr, serverCq, clientCq, 2);
            } finally {
                for (Pair p : pairs) {
                    p.close();
                }
            }
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after closing everything");
    }

    @OnEveryLabTransport
    void connectionsWithAnSrqReceiveFromIt(Transport t) throws Exception {
        Selection sel = LabDevices.select(t);
        Map<String, Integer> before = LeakCheck.counts();
        InetSocketAddress at = new InetSocketAddress(sel.ipAddress(), LabPorts.next());
        try (DeviceContext ctx = CmContexts.open(sel.device().name());
             RdmaListener listener = RdmaListener.bind(at, 8, ConnectionOptions.defaults());
             CompletionBatch batch = new CompletionBatch(8)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue serverCq = ctx.createCompletionQueue(512);
            CompletionQueue clientCq = ctx.createCompletionQueue(512);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1);
            SharedResources server = new SharedResources(pd, serverCq).withSrq(srq);
            SharedResources client = new SharedResources(pd, clientCq);
            MemoryRegion serverMr = pd.allocate(8 * SLOT);
            MemoryRegion clientMr = pd.allocate(8 * SLOT);
            try (ReceiveRequest r = srq.newReceiveRequest(1, 1)) {
                for (int k = 0; k < 4; k++) {
                    srq.postRecv(r.wrId(100 + k).sge(serverMr, (long) k * SLOT, SLOT));
                }
            }
            List<Pair> pairs = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    pairs.add(connect(listener, server, client, s -> { }));
                }
                for (int i = 0; i < 2; i++) {
                    clientMr.segment().set(JAVA_BYTE, (long) i * SLOT, (byte) (0x40 + i));
                    try (SendRequest s = pairs.get(i).client().queuePair().newSendRequest(1, 1)) {
                        pairs.get(i).client().queuePair().postSend(s.wrId(i).opcode(0, Opcode.SEND)
                                .sge(clientMr, (long) i * SLOT, 32));
                    }
                }
                drain(clientCq, batch, 2);
                List<Integer> serverQps = List.of(pairs.get(0).server().queuePair().qpNumber(),
                        pairs.get(1).server().queuePair().qpNumber());
                List<Integer> seenQps = new ArrayList<>();
                List<Byte> seenFirstBytes = new ArrayList<>();
                while (seenQps.size() < 2) {
                    int got = serverCq.pollUntil(batch, T);
                    assertTrue(got > 0, "receives from the SRQ: " + seenQps.size() + " of 2");
                    for (int k = 0; k < got; k++) {
                        batch.requireSuccess(k);
                        assertEquals(32, batch.byteLength(k));
                        int slot = (int) batch.wrId(k) - 100;
                        assertTrue(slot >= 0 && slot < 4, "wr_id " + batch.wrId(k) + " is one posted to the SRQ");
                        seenQps.add(batch.qpNumber(k));
                        seenFirstBytes.add(serverMr.segment().get(JAVA_BYTE, (long) slot * SLOT));
                    }
                }
                assertTrue(seenQps.containsAll(serverQps), "receives on " + seenQps + ", QPs " + serverQps);
                assertTrue(seenFirstBytes.containsAll(List.of((byte) 0x40, (byte) 0x41)), seenFirstBytes.toString());
            } finally {
                for (Pair p : pairs) {
                    p.close();
                }
            }
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after closing everything");
    }

    @Test
    void aConnectionOnAnotherDeviceThanTheSharedPdIsRefusedNamingBoth() throws Exception {
        Selection roce = LabDevices.select(Transport.ROCE_V2);
        Selection iwarp = LabDevices.select(Transport.IWARP);
        Map<String, Integer> before = LeakCheck.counts();
        InetSocketAddress at = new InetSocketAddress(roce.ipAddress(), LabPorts.next());
        try (DeviceContext ctx = CmContexts.open(iwarp.device().name())) {
            SharedResources onIwarp = new SharedResources(ctx.allocateProtectionDomain(), ctx.createCompletionQueue(256));
            RdmaException e = assertThrows(RdmaException.class,
                    () -> RdmaConnection.resolve(at, null, ConnectionOptions.defaults(), T, onIwarp));
            assertTrue(e.getMessage().contains(roce.device().name()) && e.getMessage().contains(iwarp.device().name()),
                    e.getMessage());
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after the refused connection");
    }

    @Test
    void anUnknownDeviceListsThoseThatExist() throws Exception {
        String known = LabDevices.select(Transport.ROCE_V2).device().name();
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class, () -> CmContexts.open("nosuchdev9"));
        assertTrue(e.getMessage().contains("nosuchdev9") && e.getMessage().contains(known), e.getMessage());
    }

    @OnEveryLabTransport
    void endedSaysHowTheConnectionEnded(Transport t) throws Exception {
        Selection sel = LabDevices.select(t);
        InetSocketAddress at = new InetSocketAddress(sel.ipAddress(), LabPorts.next());
        try (DeviceContext ctx = CmContexts.open(sel.device().name());
             RdmaListener listener = RdmaListener.bind(at, 8, ConnectionOptions.defaults())) {
            SharedResources shared = new SharedResources(ctx.allocateProtectionDomain(), ctx.createCompletionQueue(512));

            try (Pair p = connect(listener, shared, shared, s -> { })) { // the peer disconnects
                assertFalse(p.server().ended().isDone());
                p.client().disconnect();
                ConnectionEnd end = p.server().ended().get(1, TimeUnit.SECONDS);
                assertEquals(ConnectionEnd.Reason.DISCONNECTED, end.reason(), end.toString());
            }
            try (Pair p = connect(listener, shared, shared, s -> { })) { // the peer closes
                p.client().close();
                assertEquals(ConnectionEnd.Reason.CLOSED, p.client().ended().get(1, TimeUnit.SECONDS).reason());
                assertEquals(ConnectionEnd.Reason.DISCONNECTED, p.server().ended().get(1, TimeUnit.SECONDS).reason());
            }
            try (Pair p = connect(listener, shared, shared, s -> { })) { // the layer above fails it
                assertTrue(p.server().fail("a flushed receive"));
                assertFalse(p.server().fail("again"), "the first end wins");
                ConnectionEnd end = p.server().ended().get(1, TimeUnit.SECONDS);
                assertEquals(new ConnectionEnd(ConnectionEnd.Reason.FAILED, "a flushed receive"), end);
                assertEquals(ConnectionEnd.Reason.DISCONNECTED, p.client().ended().get(1, TimeUnit.SECONDS).reason(),
                        "fail disconnects, so the peer learns of it");
                p.server().close();
                assertEquals(end, p.server().ended().get(), "closing after the end changes nothing");
                assertNotEquals(null, p.client().queuePair());
            }
        }
    }
}
