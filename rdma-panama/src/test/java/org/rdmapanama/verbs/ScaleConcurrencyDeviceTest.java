package org.rdmapanama.verbs;

import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.testkit.FaultRig.CmPair;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scale, the small in-suite versions (the full 256-connection run between two
 * processes is {@code rdma-bench scale}): many connections through one
 * listener, and many threads each driving its own QP and CQ at once.
 */
@Tag("device")
class ScaleConcurrencyDeviceTest {
    /**
     * siw (Linux 6.1, rdma-core 44) gives a device context 144 pages of queue
     * mappings: the 145th page's mmap key is 0x90000, which libsiw takes for its
     * "invalid key" and refuses, without an errno. A connection needs 3 (CQ, SQ,
     * RQ), both sides share this JVM's one librdmacm context, so 8 fit easily
     * (native {@code ucmatose -c 64}, 4 pages each, fails the same way).
     */
    static int connections(Transport t) {
        return t == Transport.IWARP ? 8 : 32; // the lab's iWARP device is siw
    }
    static final int THREADS = 8;
    static final int WRITES = 1000;
    static final int SLOT = 256;

    /** 32 (siw: 8) connections through one listener; each carries an RDMA Write and a Send that the server checks. */
    @OnEveryLabTransport
    void manyConnectionsThroughOneListener(Transport transport) throws Exception {
        final int CONNECTIONS = connections(transport);
        String device = LabDevices.select(transport).device().name();
        ConnectionOptions opts = new ConnectionOptions(4, 4, 1, 1, 0, 8, 1, 7, 7);
        InetSocketAddress where = new InetSocketAddress(FaultRig.addressOf(transport), LabPorts.next());
        List<RdmaConnection> clients = new ArrayList<>();
        List<RdmaConnection> servers = new ArrayList<>();
        List<MemoryRegion> serverMrs = new ArrayList<>();
        try (RdmaListener listener = RdmaListener.bind(where, CONNECTIONS, opts)) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < CONNECTIONS; i++) {
                        RdmaConnection c = listener.accept(FaultRig.T);
                        servers.add(c);
                        MemoryRegion mr = c.protectionDomain().allocate(128, Access.REMOTE_WRITE);
                        serverMrs.add(mr);
                        try (ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1)) {
                            c.queuePair().postRecv(recv.wrId(i).sge(mr, 64, 8));
                        }
                        c.accept(mr.remote().toBytes(), FaultRig.T);
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            long start = System.nanoTime();
            for (int i = 0; i < CONNECTIONS; i++) {
                RdmaConnection c = RdmaConnection.resolve(where, null, opts, FaultRig.T);
                clients.add(c);
                c.connect(new byte[0], FaultRig.T);
            }
            long connected = System.nanoTime();
            server.get(60, TimeUnit.SECONDS);
            try (CompletionBatch batch = new CompletionBatch(4)) {
                for (int i = 0; i < CONNECTIONS; i++) {
                    RdmaConnection c = clients.get(i);
                    RemoteBuffer peer = RemoteBuffer.fromBytes(c.peerPrivateData());
                    MemoryRegion mine = c.protectionDomain().allocate(64);
                    mine.segment().set(JAVA_LONG, 0, 0x5ca1e000L + i);
                    try (SendRequest wr = c.queuePair().newSendRequest(1, 1)) {
                        c.queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(mine, 0, 64).remote(peer.at(0, 64), peer.rkey()));
                        assertEquals(1, c.completionQueue().pollUntil(batch, FaultRig.T));
                        batch.requireSuccess(0);
                        c.queuePair().postSend(wr.opcode(0, Opcode.SEND).sge(mine, 0, 8));
                        assertEquals(1, c.completionQueue().pollUntil(batch, FaultRig.T));
                        batch.requireSuccess(0);
                    }
                }
                for (int i = 0; i < CONNECTIONS; i++) {
                    RdmaConnection s = servers.get(i);
                    assertEquals(1, s.completionQueue().pollUntil(batch, FaultRig.T), "receive on connection " + i);
                    batch.requireSuccess(0);
                    assertEquals(i, batch.wrId(0));
                    assertEquals(0x5ca1e000L + i, serverMrs.get(i).segment().get(JAVA_LONG, 0), "written, connection " + i);
                    assertEquals(0x5ca1e000L + i, serverMrs.get(i).segment().get(JAVA_LONG, 64), "sent, connection " + i);
                }
            }
            long closing = System.nanoTime();
            for (RdmaConnection c : clients) {
                c.close();
            }
            for (RdmaConnection s : servers) {
                assertTrue(s.awaitDisconnect(FaultRig.T), "server side saw the disconnect");
                s.close();
            }
            long end = System.nanoTime();
            System.out.printf("SCALE %s: %d connections in one JVM in %.2f s (%.1f connections/s), data verified, "
                            + "all closed in %.2f s%n", device, CONNECTIONS, (connected - start) / 1e9,
                    CONNECTIONS / ((connected - start) / 1e9), (end - closing) / 1e9);
        } finally {
            for (RdmaConnection c : clients) {
                Cleanup.closeQuietly(c);
            }
            for (RdmaConnection c : servers) {
                Cleanup.closeQuietly(c);
            }
        }
    }

    /** 8 threads, each with its own connection (QP and CQ), 1000 RDMA Writes each with its own pattern. */
    @OnEveryLabTransport
    void threadsWithTheirOwnQueuePairsDoNotInterfere(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        List<CmPair> pairs = new ArrayList<>();
        try {
            for (int t = 0; t < THREADS; t++) {
                pairs.add(FaultRig.cmPair(transport, ConnectionOptions.defaults(), SLOT));
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            long start = System.nanoTime();
            for (int t = 0; t < THREADS; t++) {
                CmPair p = pairs.get(t);
                int id = t;
                threads.add(Thread.ofPlatform().name("writer-" + t).start(() -> {
                    try (SendRequest wr = p.client().queuePair().newSendRequest(1, 1);
                         CompletionBatch batch = new CompletionBatch(1)) {
                        wr.opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, SLOT).remote(p.atServer().address(), p.atServer().rkey());
                        for (int i = 0; i < WRITES; i++) {
                            long tag = ((long) id << 32) | i;
                            for (int off = 0; off < SLOT; off += 8) {
                                p.clientMr().segment().set(JAVA_LONG, off, tag ^ off);
                            }
                            p.client().queuePair().postSend(wr.wrId(tag));
                            if (p.client().completionQueue().pollUntil(batch, FaultRig.T) != 1) {
                                throw new AssertionError("thread " + id + ": no completion for write " + i);
                            }
                            batch.requireSuccess(0);
                            if (batch.wrId(0) != tag) {
                                throw new AssertionError("thread " + id + ": completion of " + batch.wrId(0) + ", expected " + tag);
                            }
                            for (int off = 0; off < SLOT; off += 8) {
                                long got = p.serverMr().segment().get(JAVA_LONG, off);
                                if (got != (tag ^ off)) {
                                    throw new AssertionError("thread " + id + " write " + i + " offset " + off + ": got 0x"
                                            + Long.toHexString(got) + ", expected 0x" + Long.toHexString(tag ^ off));
                                }
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread t : threads) {
                t.join(Duration.ofMinutes(3));
                assertTrue(!t.isAlive(), t.getName() + " still running after 3 minutes");
            }
            double s = (System.nanoTime() - start) / 1e9;
            assertNull(failure.get(), String.valueOf(failure.get()));
            System.out.printf("SCALE %s: %d threads x %d RDMA Writes of %d bytes, each on its own QP and CQ, all verified, "
                    + "in %.2f s (%.0f writes/s)%n", device, THREADS, WRITES, SLOT, s, THREADS * WRITES / s);
            byte last = pairs.getFirst().serverMr().segment().get(JAVA_BYTE, 0);
            assertEquals((byte) (WRITES - 1), last, "thread 0's last write");
        } finally {
            for (CmPair p : pairs) {
                p.close();
            }
        }
    }
}
