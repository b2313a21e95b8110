package org.rdmapanama.testkit;

import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QpAddress;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;
import org.rdmapanama.verbs.RemoteBuffer;
import org.rdmapanama.verbs.SendRequest;
import org.rdmapanama.verbs.WcStatus;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * What the fault, scale and bad-input tests share: an in-process rdma_cm
 * connection pair with one registered buffer on each side (their address and
 * rkey exchanged as private data), and an out-of-band RC pair on the RoCEv2
 * device that can be torn down to RESET and brought up again.
 */
public final class FaultRig {
    private FaultRig() {}

    public static final Duration T = Duration.ofSeconds(30);
    /** The address rdma_cm reaches the device {@code t} selects by: its interface's (rdma_cm picks devices by address). */
    public static InetAddress addressOf(Transport t) throws Exception {
        return LabDevices.select(t).ipAddress();
    }

    public static void fill(MemoryRegion mr, long from, long length, int seed) {
        for (long i = 0; i < length; i++) {
            mr.segment().set(JAVA_BYTE, from + i, (byte) (i * 31 + seed));
        }
    }

    /**
     * Waits (up to 5 s) for a remote Write's data to show. On iWARP a Write's
     * completion says only that the source buffer may be reused: the data may
     * still be in TCP on its way (InfiniBand and RoCE complete after the ACK).
     */
    public static boolean awaitMatch(MemoryRegion mr, long from, long length, int seed) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!matches(mr, from, length, seed)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    public static boolean matches(MemoryRegion mr, long from, long length, int seed) {
        for (long i = 0; i < length; i++) {
            if (mr.segment().get(JAVA_BYTE, from + i) != (byte) (i * 31 + seed)) {
                return false;
            }
        }
        return true;
    }

    /**
     * What one side observed after a fault: how many completions succeeded, the first failed
     * completion (status, after how long), and the first rdma_cm event (after how long); null
     * where nothing came in time.
     */
    public record Outcome(int succeeded, WcStatus error, long wrId, long errorMillis, CmEventType event, long eventMillis) {
        /** The fault was reported: a failed completion or a connection event. */
        public boolean reported() {
            return error != null || event != null;
        }

        @Override
        public String toString() {
            return succeeded + " completion(s) SUCCESS, error completion "
                    + (error == null ? "none" : error.describe() + " (wr " + wrId + ") after " + errorMillis + " ms")
                    + ", cm event " + (event == null ? "none" : event + " after " + eventMillis + " ms");
        }
    }

    /**
     * Polls {@code c}'s CQ and its cm events until both an error completion and an event came,
     * or until {@code limit}; once either came, waits at most {@code grace} more for the other.
     */
    public static Outcome watch(RdmaConnection c, long startNanos, Duration limit, Duration grace) throws Exception {
        WcStatus error = null;
        int ok = 0;
        long wrId = -1, errAt = -1, evAt = -1;
        CmEventType event = null;
        long end = startNanos + limit.toNanos();
        boolean shortened = false;
        try (CompletionBatch batch = new CompletionBatch(16)) {
            while (System.nanoTime() - end < 0 && (error == null || event == null)) {
                int n = c.completionQueue().poll(batch);
                for (int i = 0; i < n; i++) {
                    if (batch.isSuccess(i)) {
                        ok++;
                    } else if (error == null) {
                        error = batch.status(i);
                        wrId = batch.wrId(i);
                        errAt = System.nanoTime();
                    }
                }
                if (event == null) {
                    event = c.awaitEvent(Duration.ofMillis(2));
                    if (event != null) {
                        evAt = System.nanoTime();
                    }
                }
                if (!shortened && (error != null || event != null)) {
                    shortened = true;
                    end = Math.min(end, System.nanoTime() + grace.toNanos());
                }
            }
        }
        return new Outcome(ok, error, wrId, errAt < 0 ? -1 : (errAt - startNanos) / 1_000_000,
                event, evAt < 0 ? -1 : (evAt - startNanos) / 1_000_000);
    }

    /** Posts one more RDMA Write of 64 bytes after a fault and says what became of it. */
    public static String postAfterFault(RdmaConnection c, MemoryRegion local, RemoteBuffer remote) throws Exception {
        try (SendRequest wr = c.queuePair().newSendRequest(1, 1)) {
            c.queuePair().postSend(wr.wrId(77).opcode(0, Opcode.RDMA_WRITE).sge(local, 0, 64)
                    .remote(remote.address(), remote.rkey()));
        } catch (RdmaException | IllegalStateException e) {
            return "post refused: " + e.getMessage();
        }
        Outcome o = watch(c, System.nanoTime(), Duration.ofSeconds(2), Duration.ZERO);
        return "posted; " + o;
    }

    /** Both ends of one rdma_cm connection in this JVM, each with an MR the other may read and write. */
    public record CmPair(RdmaListener listener, RdmaConnection client, RdmaConnection server,
                  MemoryRegion clientMr, MemoryRegion serverMr, RemoteBuffer atServer, RemoteBuffer atClient)
            implements AutoCloseable {
        @Override
        public void close() throws Exception {
            Exception first = null;
            for (AutoCloseable c : new AutoCloseable[] {client, server, listener}) {
                try {
                    if (c != null) {
                        c.close();
                    }
                } catch (Exception e) {
                    first = first == null ? e : first;
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }

    public static CmPair cmPair(Transport t, ConnectionOptions opts, int mrSize) throws Exception {
        return cmPair(addressOf(t), opts, mrSize);
    }

    public static CmPair cmPair(InetAddress address, ConnectionOptions opts, int mrSize) throws Exception {
        InetSocketAddress where = new InetSocketAddress(address, LabPorts.next());
        RdmaListener listener = RdmaListener.bind(where, 4, opts);
        RdmaConnection client = null;
        CompletableFuture<Object[]> server = null;
        boolean ok = false;
        try {
            server = CompletableFuture.supplyAsync(() -> {
                RdmaConnection c = null;
                try {
                    c = listener.accept(T);
                    if (c == null) {
                        throw new IllegalStateException("no connect request within " + T);
                    }
                    MemoryRegion mr = c.protectionDomain().allocate(mrSize, Access.REMOTE_READ, Access.REMOTE_WRITE);
                    c.accept(mr.remote().toBytes(), T);
                    return new Object[] {c, mr};
                } catch (Exception e) {
                    Cleanup.closeQuietly(c);
                    throw new RuntimeException(e);
                }
            });
            client = RdmaConnection.resolve(where, null, opts, T);
            MemoryRegion mine = client.protectionDomain().allocate(mrSize, Access.REMOTE_READ, Access.REMOTE_WRITE);
            client.connect(mine.remote().toBytes(), T);
            Object[] s = server.get(60, TimeUnit.SECONDS);
            RdmaConnection sc = (RdmaConnection) s[0];
            MemoryRegion smr = (MemoryRegion) s[1];
            CmPair pair = new CmPair(listener, client, sc, mine, smr,
                    RemoteBuffer.fromBytes(client.peerPrivateData()), RemoteBuffer.fromBytes(sc.peerPrivateData()));
            ok = true;
            return pair;
        } finally {
            if (!ok) {
                Cleanup.closeQuietly(client);
                if (server != null) {
                    try {
                        Object[] s = server.get(30, TimeUnit.SECONDS);
                        Cleanup.closeQuietly((RdmaConnection) s[0]);
                    } catch (Exception ignored) {
                        // the server side failed too; it closed its connection
                    }
                }
                listener.close();
            }
        }
    }

    /**
     * Two RC QPs of the RoCEv2 device connected to each other out of band, each with
     * its own CQ and MR, on the port and GID selection picks (iWARP has no out-of-band setup).
     */
    public static final class OobPair implements AutoCloseable {
        public final DeviceContext ctx;
        public final ProtectionDomain pd;
        public final CompletionQueue cqA, cqB;
        public final QueuePair a, b;
        public final MemoryRegion mrA, mrB;
        public final int port, gid;
        public final byte[] gidBytes;
        private int psn = 100;

        public OobPair(int cqEntries, int mrSize, int sendDepth) throws Exception {
            ctx = LabDevices.open(Transport.ROCE_V2);
            boolean ok = false;
            try {
                pd = ctx.allocateProtectionDomain();
                cqA = ctx.createCompletionQueue(cqEntries);
                cqB = ctx.createCompletionQueue(cqEntries);
                a = pd.createQueuePair(QueuePairConfig.rc(cqA).withQueueDepth(sendDepth, 4));
                b = pd.createQueuePair(QueuePairConfig.rc(cqB).withQueueDepth(sendDepth, 4));
                Access[] remote = {Access.REMOTE_READ, Access.REMOTE_WRITE};
                mrA = pd.allocate(mrSize, remote);
                mrB = pd.allocate(mrSize, remote);
                Selection s = ctx.selection();
                port = s.port().number();
                gid = s.gidIndex();
                gidBytes = s.gid().raw();
                bringUp();
                ok = true;
            } finally {
                if (!ok) {
                    ctx.close();
                }
            }
        }

        /** RESET → INIT → RTR → RTS on both QPs, with fresh PSNs. */
        public void bringUp() throws RdmaException {
            int pa = psn++, pb = psn++;
            a.toInit(port, Access.REMOTE_READ, Access.REMOTE_WRITE);
            b.toInit(port, Access.REMOTE_READ, Access.REMOTE_WRITE);
            a.toRtr(new QpAddress(0, b.qpNumber(), pb, gidBytes), port, gid, 1024);
            b.toRtr(new QpAddress(0, a.qpNumber(), pa, gidBytes), port, gid, 1024);
            a.toRts(pa);
            b.toRts(pb);
        }

        @Override
        public void close() throws RdmaException {
            ctx.close();
        }
    }
}
