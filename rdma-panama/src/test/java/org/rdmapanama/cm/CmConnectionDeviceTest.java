package org.rdmapanama.cm;

import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.RemoteBuffer;
import org.rdmapanama.verbs.SendRequest;
import org.junit.jupiter.api.Tag;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rdma_cm connections inside one JVM, on each lab device: private data
 * carries an MR's address and rkey, then Send/Recv, RDMA Write and Read move
 * data that is checked byte for byte.
 */
@Tag("device")
class CmConnectionDeviceTest {
    static final Duration T = Duration.ofSeconds(30);

    /** rdma_cm picks the device by address: the address of the interface the selected device is bound to. */
    static InetAddress addressOf(Transport t) throws Exception {
        return LabDevices.select(t).ipAddress();
    }

    static byte[] advertise(MemoryRegion mr) {
        return ByteBuffer.allocate(16).putLong(mr.address()).putInt(mr.rkey()).putInt((int) mr.length()).array();
    }

    static RemoteBuffer parse(byte[] data) {
        ByteBuffer b = ByteBuffer.wrap(data);
        return new RemoteBuffer(b.getLong(), b.getInt(), b.getInt());
    }

    @OnEveryLabTransport
    void connectExchangeKeysAndMoveData(Transport transport) throws Exception {
        Selection s = LabDevices.select(transport);
        String device = s.device().name();
        InetSocketAddress where = new InetSocketAddress(s.ipAddress(), 20001 + transport.ordinal());
        ConnectionOptions opts = ConnectionOptions.defaults();
        try (RdmaListener listener = RdmaListener.bind(where, 4, opts)) {
            CompletableFuture<byte[]> server = CompletableFuture.supplyAsync(() -> {
                try (RdmaConnection c = listener.accept(T)) {
                    MemoryRegion mr = c.protectionDomain().allocate(4096, Access.REMOTE_READ, Access.REMOTE_WRITE);
                    for (int i = 0; i < 4096; i++) {
                        mr.segment().set(JAVA_BYTE, i, (byte) (i ^ 0x5a));
                    }
                    // RoCE pads private data to the IB CM size; iWARP delivers it as sent.
                    assertTrue(c.peerPrivateData().length >= 16, "private data " + c.peerPrivateData().length);
                    try (ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1);
                         CompletionBatch batch = new CompletionBatch(4)) {
                        c.queuePair().postRecv(recv.wrId(1).sge(mr, 2048, 100));
                        c.accept(advertise(mr), T);
                        assertEquals(device, c.context().device().name(), "rdma_cm picked the device by address");
                        assertEquals(transport, c.context().transport());
                        assertEquals(1, c.completionQueue().pollUntil(batch, T));
                        batch.requireSuccess(0);
                        assertEquals(100, batch.byteLength(0));
                        // the client writes into [0,1024) then disconnects
                        assertTrue(c.awaitDisconnect(T), "client disconnect seen");
                        return mr.segment().asSlice(0, 4096).toArray(JAVA_BYTE);
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (RdmaConnection c = RdmaConnection.resolve(where, null, opts, T)) {
                assertEquals(device, c.context().device().name());
                MemoryRegion mine = c.protectionDomain().allocate(4096);
                c.connect(advertise(mine), T);
                RemoteBuffer remote = parse(c.peerPrivateData());
                assertEquals(4096, remote.length());
                try (SendRequest send = c.queuePair().newSendRequest(1, 1); CompletionBatch batch = new CompletionBatch(4)) {
                    // RDMA Read the server's pattern
                    c.queuePair().postSend(send.wrId(1).opcode(0, Opcode.RDMA_READ).sge(mine, 0, 4096)
                            .remote(remote.address(), remote.rkey()));
                    assertEquals(1, c.completionQueue().pollUntil(batch, T));
                    batch.requireSuccess(0);
                    for (int i = 0; i < 4096; i++) {
                        assertEquals((byte) (i ^ 0x5a), mine.segment().get(JAVA_BYTE, i), "read byte " + i);
                    }
                    // Send 100 bytes into the server's posted receive
                    c.queuePair().postSend(send.wrId(2).opcode(0, Opcode.SEND).sge(mine, 0, 100));
                    assertEquals(1, c.completionQueue().pollUntil(batch, T));
                    batch.requireSuccess(0);
                    // RDMA Write a new pattern into the server's first KiB
                    for (int i = 0; i < 1024; i++) {
                        mine.segment().set(JAVA_BYTE, i, (byte) (i * 7));
                    }
                    c.queuePair().postSend(send.wrId(3).opcode(0, Opcode.RDMA_WRITE).sge(mine, 0, 1024)
                            .remote(remote.at(0, 1024), remote.rkey()));
                    assertEquals(1, c.completionQueue().pollUntil(batch, T));
                    batch.requireSuccess(0);
                }
                c.disconnect();
            }
            byte[] serverMemory = server.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < 1024; i++) {
                assertEquals((byte) (i * 7), serverMemory[i], "written byte " + i);
            }
            for (int i = 0; i < 100; i++) {
                assertEquals((byte) (i ^ 0x5a), serverMemory[2048 + i], "sent byte " + i);
            }
        }
    }

    @OnEveryLabTransport
    void connectingWhereNobodyListensFailsFast(Transport transport) throws Exception {
        InetSocketAddress nobody = new InetSocketAddress(addressOf(transport), LabPorts.next());
        long start = System.nanoTime();
        CmException e = assertThrows(CmException.class, () -> {
            try (RdmaConnection c = RdmaConnection.resolve(nobody, null, ConnectionOptions.defaults(), T)) {
                c.connect(new byte[0], T);
            }
        });
        long ms = (System.nanoTime() - start) / 1_000_000;
        String device = LabDevices.select(transport).device().name();
        System.out.println("connect to a port nobody listens on, " + device + ": event " + e.event() + ", errno "
                + e.errno() + ": " + e.getMessage());
        if (transport == Transport.IWARP) {
            // iWARP connects over TCP: the kernel's connect is refused, so rdma_connect itself fails
            // with ECONNREFUSED (111), before any event.
            assertNull(e.event(), e.getMessage());
            assertEquals(111, e.errno(), e.getMessage());
        } else {
            // RoCE: the peer's IB CM answers a REQ for a service nobody listens on with a REJ.
            assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
        }
        // RoCE waits for the CM's REQ retries when nothing answers; TCG makes that slow. Bounded, not a hang.
        System.out.println("connect to a port nobody listens on, " + device + ": " + e.getMessage() + " after " + ms + " ms");
        assertTrue(ms < 60_000, "took " + ms + " ms");
    }

    @OnEveryLabTransport
    void closingAListenerEndsAWaitingAccept(Transport transport) throws Exception {
        RdmaListener listener = RdmaListener.bind(new InetSocketAddress(addressOf(transport), LabPorts.next()), 1,
                ConnectionOptions.defaults());
        CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                listener.accept(Duration.ofMinutes(5));
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        Thread.sleep(500);
        listener.close();
        Throwable t = waiter.get(10, TimeUnit.SECONDS);
        assertTrue(t instanceof ClosedResourceException, String.valueOf(t));
    }

    @OnEveryLabTransport
    void acceptTimesOutWithNull(Transport transport) throws Exception {
        try (RdmaListener listener = RdmaListener.bind(new InetSocketAddress(addressOf(transport), LabPorts.next()), 1,
                ConnectionOptions.defaults())) {
            assertNull(listener.accept(Duration.ofMillis(300)));
        }
    }

    @OnEveryLabTransport
    void oversizedPrivateDataIsRefusedBeforeConnecting(Transport transport) throws Exception {
        InetSocketAddress where = new InetSocketAddress(addressOf(transport), LabPorts.next());
        try (RdmaListener listener = RdmaListener.bind(where, 1, ConnectionOptions.defaults());
             RdmaConnection c = RdmaConnection.resolve(where, null, ConnectionOptions.defaults(), T)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.connect(new byte[300], T));
            assertTrue(e.getMessage().contains("private data of 300 bytes exceeds"), e.getMessage());
        }
    }
}
