package org.rdmapanama.verbs;

import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.CompletionQueueOverrunException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabCpu;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.CmException;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.testkit.FaultRig.CmPair;
import org.rdmapanama.testkit.FaultRig.OobPair;
import org.rdmapanama.testkit.FaultRig.Outcome;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults on each lab transport (RoCEv2 and iWARP, the device picked by
 * selection): a peer killed mid-transfer, remote access errors, a Send nobody
 * posted a receive for, a CQ overrun, and memory or a PD freed while queue
 * pairs use them. Each case prints one "FAULT ..." line with what was
 * observed and asserts what the transport promises; where RoCEv2 and iWARP
 * differ, the transport decides which outcome is expected. None may crash the
 * JVM, hang, or leak (LeakFinalDeviceTest checks the kernel's object counts after the suite).
 */
@Tag("device")
class FaultInjectionDeviceTest {
    static final Duration LIMIT = Duration.ofSeconds(60);
    static final Duration GRACE = Duration.ofSeconds(1);

    static void report(String device, String fault, Object outcome) {
        System.out.println("FAULT " + device + " | " + fault + " | " + outcome);
    }

    // --- 1. a peer process killed mid-transfer ---

    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /**
     * The peer is the native {@code rping -s}, on a vCPU of its own (LabCpu); this side is
     * an rping client (advertise source, server RDMA-Reads it, advertise sink,
     * server RDMA-Writes it). After a few pings the server is killed with
     * SIGKILL while this side has an advertisement Send and a receive posted.
     */
    @OnEveryLabTransport
    void aPeerKilledMidTransferIsReportedAndEverythingIsFreed(Transport transport) throws Exception {
        Selection s = LabDevices.select(transport);
        String device = s.device().name();
        InetAddress ip = s.ipAddress();
        int port = LabPorts.next();
        int size = 16384;
        Process rping = LabCpu.start(new ProcessBuilder("rping", "-s", "-a", ip.getHostAddress(),
                "-p", Integer.toString(port), "-C", "1000000", "-S", Integer.toString(size))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD));
        RdmaConnection c = null;
        try {
            c = connectWithRetry(new InetSocketAddress(ip, port), ConnectionOptions.defaults().withDepth(16, 2));
            MemoryRegion mr = c.protectionDomain().allocate(2L * size + 64, Access.REMOTE_READ, Access.REMOTE_WRITE);
            long infoAt = 2L * size, recvAt = 2L * size + 32;
            FaultRig.fill(mr, 0, size, 3);
            try (SendRequest send = c.queuePair().newSendRequest(1, 1);
                 ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1);
                 CompletionBatch batch = new CompletionBatch(4)) {
                recv.wrId(1).sge(mr, recvAt, 16);
                send.wrId(2).opcode(0, Opcode.SEND).sge(mr, infoAt, 16);
                c.queuePair().postRecv(recv);
                int pings = 0;
                long killedAt = 0;
                for (int step = 0; killedAt == 0; step++) {
                    long buf = mr.address() + (step % 2 == 0 ? 0 : size);
                    mr.segment().set(BE64, infoAt, buf);
                    mr.segment().set(BE32, infoAt + 8, mr.rkey());
                    mr.segment().set(BE32, infoAt + 12, size);
                    c.queuePair().postSend(send);
                    if (step == 10) {
                        // 5 pings done; the server is now RDMA-Reading 16 KiB from us.
                        rping.destroyForcibly(); // SIGKILL
                        killedAt = System.nanoTime();
                        break;
                    }
                    int done = 0;
                    while (done < 2) { // our Send and the server's reply
                        int n = c.completionQueue().pollUntil(batch, Duration.ofSeconds(30));
                        assertTrue(n > 0, "no completion from the live rping server at step " + step);
                        for (int i = 0; i < n; i++) {
                            batch.requireSuccess(i);
                            if (batch.wrId(i) == 1) {
                                c.queuePair().postRecv(recv);
                            }
                        }
                        done += n;
                    }
                    pings += step % 2;
                }
                assertTrue(rping.waitFor(10, TimeUnit.SECONDS), "rping did not die");
                Outcome o = FaultRig.watch(c, killedAt, LIMIT, GRACE);
                report(device, "rping -s killed (SIGKILL) after " + pings + " pings, Send+Recv in flight", o);
                Outcome later = FaultRig.watch(c, System.nanoTime(), Duration.ofSeconds(3), Duration.ZERO);
                report(device, "  ... then, within 3 s more (a new post watched 2 s)", later + "; QP " + c.queuePair().state()
                        + "; a new post: " + FaultRig.postAfterFault(c, mr, new RemoteBuffer(mr.address(), mr.rkey(), 64)));
                // The dead process's cm_id is destroyed by its kernel: a DREQ on RoCE, a TCP reset on iWARP.
                assertEquals(CmEventType.DISCONNECTED, o.event(), "within " + LIMIT + ": " + o);
            }
            long t = System.nanoTime();
            c.close();
            c = null;
            report(device, "close() after the peer died", "took " + (System.nanoTime() - t) / 1_000_000 + " ms");
        } finally {
            rping.destroyForcibly();
            rping.waitFor(10, TimeUnit.SECONDS);
            if (c != null) {
                c.close();
            }
        }
    }

    /**
     * After the peer disconnects, work still posted here must end (flushed,
     * IBV_WC_WR_FLUSH_ERR) rather than wait forever: a thread blocked polling
     * for that receive would otherwise hang.
     */
    @OnEveryLabTransport
    void aPeerDisconnectFlushesOutstandingWork(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), 4096);
             ReceiveRequest recv = p.server().queuePair().newReceiveRequest(1, 1)) {
            p.server().queuePair().postRecv(recv.wrId(42).sge(p.serverMr(), 0, 64));
            p.client().disconnect();
            long t = System.nanoTime();
            Outcome o = FaultRig.watch(p.server(), t, Duration.ofSeconds(10), Duration.ofSeconds(3));
            QpState state = p.server().queuePair().state();
            report(device, "peer called rdma_disconnect; a receive was posted here", o + "; QP " + state);
            assertEquals(CmEventType.DISCONNECTED, o.event(), o.toString());
            assertEquals(WcStatus.WR_FLUSH_ERR, o.error(), "the posted receive after DISCONNECTED (QP " + state + "): " + o);
        }
    }

    static RdmaConnection connectWithRetry(InetSocketAddress where, ConnectionOptions opts) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Thread.sleep(500); // rping needs a moment to listen
            RdmaConnection c = RdmaConnection.resolve(where, null, opts, FaultRig.T);
            try {
                c.connect(new byte[0], FaultRig.T);
                return c;
            } catch (CmException e) {
                c.close();
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    // --- 2. wrong rkey, out of bounds ---

    record Bad(String name, Opcode op, long offset, int length, boolean wrongKey) {}

    /**
     * Null when {@code o} is how {@code transport} reports a remote access error to the requester of
     * {@code op}, else what was expected. RoCEv2 (IB transport) NAKs the request: a REM_ACCESS_ERR
     * completion, no CM event. iWARP has no such completion: the responder terminates the stream
     * (RDMAP Terminate), which the requester sees as DISCONNECTED; a Write had already completed
     * locally when it was handed to TCP (iWARP completes Writes on sending), a Read waits for a
     * response that never comes and is flushed.
     */
    static String unlessRemoteAccessError(Transport transport, Opcode op, Outcome o) {
        if (transport != Transport.IWARP) {
            return o.error() == WcStatus.REM_ACCESS_ERR && o.event() == null ? null
                    : "a REM_ACCESS_ERR completion and no CM event";
        }
        if (op == Opcode.RDMA_READ) {
            return o.event() == CmEventType.DISCONNECTED && o.error() == WcStatus.WR_FLUSH_ERR ? null
                    : "DISCONNECTED and the Read flushed (WR_FLUSH_ERR)";
        }
        return o.event() == CmEventType.DISCONNECTED && o.succeeded() == 1 && o.error() == null ? null
                : "DISCONNECTED after the Write completed SUCCESS locally";
    }

    static List<Bad> badAccesses(int mrSize) {
        return List.of(
                new Bad("RDMA Write, wrong rkey", Opcode.RDMA_WRITE, 0, 64, true),
                new Bad("RDMA Read, wrong rkey", Opcode.RDMA_READ, 0, 64, true),
                new Bad("RDMA Write past the MR's end", Opcode.RDMA_WRITE, mrSize - 32, 64, false),
                new Bad("RDMA Read past the MR's end", Opcode.RDMA_READ, mrSize - 32, 64, false),
                new Bad("RDMA Write before the MR's start", Opcode.RDMA_WRITE, -64, 64, false));
    }

    /** RoCEv2, out-of-band QPs: each bad access fails with REM_ACCESS_ERR, then both QPs are recycled via RESET. */
    @Test
    void remoteAccessErrorsThenTheQpIsRecycledOnRoce() throws Exception {
        int size = 4096;
        try (OobPair p = new OobPair(16, size, 16);
             CompletionBatch batch = new CompletionBatch(8);
             SendRequest wr = p.a.newSendRequest(1, 1)) {
            for (Bad bad : badAccesses(size)) {
                p.a.postSend(wr.wrId(9).opcode(0, bad.op()).sge(p.mrA, 0, bad.length())
                        .remote(p.mrB.address() + bad.offset(), bad.wrongKey() ? p.mrB.rkey() ^ 0x5a5a00 : p.mrB.rkey()));
                long t = System.nanoTime();
                assertEquals(1, p.cqA.pollUntil(batch, LIMIT), bad.name());
                long ms = (System.nanoTime() - t) / 1_000_000;
                WcStatus status = batch.status(0);
                QpState requester = p.a.state(), responder = p.b.state();
                int atResponder = p.cqB.poll(batch);
                report(p.ctx.device().name(), bad.name() + " (out-of-band QPs)", "completion " + status.describe()
                        + " after " + ms + " ms; requester QP " + requester + ", responder QP " + responder
                        + ", responder completions " + atResponder);
                assertEquals(WcStatus.REM_ACCESS_ERR, status, bad.name());
                assertEquals(QpState.ERR, requester, bad.name());
                // Recycle: RESET, then INIT/RTR/RTS on both sides, and prove the pair works again.
                p.a.toReset();
                p.b.toReset();
                p.bringUp();
                assertEquals(QpState.RTS, p.a.state());
                FaultRig.fill(p.mrA, 0, size, bad.hashCode());
                p.a.postSend(wr.wrId(10).opcode(0, Opcode.RDMA_WRITE).sge(p.mrA, 0, size).remote(p.mrB.address(), p.mrB.rkey()));
                assertEquals(1, p.cqA.pollUntil(batch, LIMIT));
                batch.requireSuccess(0);
                assertTrue(FaultRig.matches(p.mrB, 0, size, bad.hashCode()), "data after recycling");
            }
        }
    }

    /**
     * Over rdma_cm on each transport: each bad access on a fresh connection is reported as the
     * transport reports it ({@link #unlessRemoteAccessError}) and leaves the QP out of RTS; then a
     * fresh connection works.
     */
    @OnEveryLabTransport
    void remoteAccessErrorsOverRdmaCmThenANewConnectionWorks(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        int size = 4096;
        List<String> failures = new ArrayList<>();
        for (Bad bad : badAccesses(size)) {
            try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), size);
                 SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
                p.client().queuePair().postSend(wr.wrId(9).opcode(0, bad.op()).sge(p.clientMr(), 0, bad.length())
                        .remote(p.atServer().address() + bad.offset(),
                                bad.wrongKey() ? p.atServer().rkey() ^ 0x5a5a00 : p.atServer().rkey()));
                long t = System.nanoTime();
                Outcome o = FaultRig.watch(p.client(), t, LIMIT, GRACE);
                QpState state = p.client().queuePair().state();
                Outcome server = FaultRig.watch(p.server(), t, Duration.ofMillis(500), Duration.ZERO);
                String next = FaultRig.postAfterFault(p.client(), p.clientMr(), p.atServer());
                report(device, bad.name() + " (rdma_cm)", o + "; client QP " + state + "; server saw " + server
                        + "; the next write: " + next);
                String expected = unlessRemoteAccessError(transport, bad.op(), o);
                if (expected != null) {
                    failures.add(bad.name() + ": expected " + expected + ", got " + o);
                }
                if (state == QpState.RTS) {
                    failures.add(bad.name() + ": the client QP is still RTS");
                }
            }
        }
        assertEquals(List.of(), failures);
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), size);
             SendRequest wr = p.client().queuePair().newSendRequest(1, 1);
             CompletionBatch batch = new CompletionBatch(4)) {
            FaultRig.fill(p.clientMr(), 0, size, 77);
            p.client().queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, size)
                    .remote(p.atServer().address(), p.atServer().rkey()));
            assertEquals(1, p.client().completionQueue().pollUntil(batch, LIMIT));
            batch.requireSuccess(0);
            assertTrue(FaultRig.awaitMatch(p.serverMr(), 0, size, 77), "data on the new connection");
        }
    }

    // --- 3. a Send without a posted receive ---

    @OnEveryLabTransport
    void aSendWithoutAPostedReceiveFailsAfterTheRnrRetries(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        ConnectionOptions opts = ConnectionOptions.defaults().withRnrRetry(1);
        try (CmPair p = FaultRig.cmPair(transport, opts, 4096);
             SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
            p.client().queuePair().postSend(wr.wrId(5).opcode(0, Opcode.SEND).sge(p.clientMr(), 0, 64));
            long t = System.nanoTime();
            Outcome o = FaultRig.watch(p.client(), t, LIMIT, GRACE);
            QpState state = p.client().queuePair().state();
            Outcome server = FaultRig.watch(p.server(), t, Duration.ofMillis(500), Duration.ZERO);
            report(device, "Send, no receive posted, rnr_retry_count 1", o + "; client QP " + state
                    + "; server saw " + server);
            assertTrue(o.reported(), "nothing within " + LIMIT + ": " + o);
            if (transport == Transport.ROCE_V2) {
                assertEquals(WcStatus.RNR_RETRY_EXC_ERR, o.error(), o.toString());
                assertEquals(QpState.ERR, state);
            } else {
                // iWARP has no RNR: the receiver terminates the connection (DDP "no receive buffer").
                assertEquals(CmEventType.DISCONNECTED, o.event(), o.toString());
            }
        }
    }

    // --- 4. CQ overrun ---

    @Test
    void connectionOptionsWithACqSmallerThanTheQueuesAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ConnectionOptions(64, 64, 1, 1, 0, 8, 1, 7, 7),
                "cqSize 8 < sendDepth 64 + recvDepth 64 was accepted");
        assertTrue(e.getMessage().contains("cqSize"), e.getMessage());
    }

    @Test
    void aQueuePairDeeperThanItsCqIsRefused() throws Exception {
        String device = LabDevices.select(Transport.ROCE_V2).device().name();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new OobPair(4, 4096, 64).close(), "a QP of depth 64 + 4 on a CQ of 4 was created");
        assertTrue(e.getMessage().contains("queue pair depth (send 64 + recv 4) exceeds"), e.getMessage());
        report(device, "QP deeper than its CQ", "refused: " + e.getMessage());
    }

    /**
     * Within the depth check, a CQ nobody polls still fills up: the loss is reported, never silent.
     * RoCEv2 QPs are connected out of band; iWARP connects only through rdma_cm.
     */
    @OnEveryLabTransport
    void anOverrunCqIsReportedNotSilent(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        if (transport == Transport.ROCE_V2) {
            try (OobPair p = new OobPair(16, 4096, 12); SendRequest wr = p.a.newSendRequest(1, 1)) {
                overrun(device, "out-of-band QP", p.a, p.cqA, wr.sge(p.mrA, 0, 64).remote(p.mrB.address(), p.mrB.rkey()));
            }
        } else {
            try (CmPair p = FaultRig.cmPair(transport, new ConnectionOptions(12, 4, 1, 1, 0, 16, 1, 7, 7), 4096);
                 SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
                overrun(device, "rdma_cm", p.client().queuePair(), p.client().completionQueue(),
                        wr.sge(p.clientMr(), 0, 64).remote(p.atServer().address(), p.atServer().rkey()));
            }
        }
    }

    private static void overrun(String device, String kind, QueuePair qp, CompletionQueue cq, SendRequest write)
            throws Exception {
        int size = cq.size(), posted = 0, refused = 0;
        write.opcode(0, Opcode.RDMA_WRITE).signaled(0, true);
        // Rounds of writes, nothing polling: each round completes into the CQ and frees its send queue slots.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (posted <= size + 4 && System.nanoTime() < deadline) {
            for (int i = 0; i < 12; i++) {
                try {
                    qp.postSend(write.wrId(posted));
                    posted++;
                } catch (RdmaException full) {
                    refused++;
                    break;
                }
            }
            Thread.sleep(300);
        }
        assertTrue(posted > size, "only " + posted + " writes could be posted to a CQ of " + size);
        int polled = 0;
        CompletionQueueOverrunException thrown = null;
        try (CompletionBatch batch = new CompletionBatch(64)) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (thrown == null && System.nanoTime() < until) {
                try {
                    polled += cq.poll(batch);
                } catch (CompletionQueueOverrunException e) {
                    thrown = e;
                }
            }
            assertTrue(thrown != null, "CQ of " + size + " entries, " + posted + " signaled writes, " + polled
                    + " completions polled and no overrun reported");
            assertTrue(cq.hasOverrun());
            assertTrue(thrown.getMessage().contains("overran"), thrown.getMessage());
            assertThrows(CompletionQueueOverrunException.class, () -> cq.poll(batch), "the overrun is reported once only");
        }
        report(device, "CQ overrun (" + kind + ")", "CQ of " + size + " entries, " + posted + " signaled RDMA Writes "
                + "with nothing polling (" + refused + " posts refused as the send queue was full); " + polled
                + " completions polled, then: " + thrown.getMessage() + "; QP " + qp.state()
                + "; closing everything afterwards returned");
    }

    // --- 6. freeing memory or a PD that queue pairs use ---

    @OnEveryLabTransport
    void deregisteringMemoryInUse(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        int size = 1 << 20;
        // (a) the target MR is deregistered by its owner, then written by the peer: its rkey is invalid now
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), size);
             SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
            p.serverMr().close();
            p.client().queuePair().postSend(wr.wrId(1).opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, 64)
                    .remote(p.atServer().address(), p.atServer().rkey()));
            Outcome o = FaultRig.watch(p.client(), System.nanoTime(), LIMIT, GRACE);
            report(device, "RDMA Write into an MR its owner deregistered", o);
            String expected = unlessRemoteAccessError(transport, Opcode.RDMA_WRITE, o);
            assertNull(expected, () -> "expected " + expected + ", got " + o);
        }
        // (b) the local MR is deregistered, then a WR built on it (its lkey) is posted. Posting does not
        // check lkeys (the provider does, when it processes the WR): the post succeeds and the WR completes
        // in error, the QP leaves RTS; iWARP also terminates the stream, RoCEv2 has no CM event for it.
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), size);
             SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
            wr.wrId(2).opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, 64).remote(p.atServer().address(), p.atServer().rkey());
            p.clientMr().close();
            p.client().queuePair().postSend(wr);
            Outcome o = FaultRig.watch(p.client(), System.nanoTime(), LIMIT, GRACE);
            QpState state = p.client().queuePair().state();
            report(device, "post of a WR whose local MR was deregistered", "posted; " + o + "; QP " + state);
            assertEquals(0, o.succeeded(), o.toString());
            assertNotEquals(null, o.error(), "no error completion: " + o);
            assertEquals(2, o.wrId(), o.toString());
            assertNotEquals(QpState.RTS, state);
            assertEquals(transport == Transport.IWARP ? CmEventType.DISCONNECTED : null, o.event(), o.toString());
        }
        // (c) the local MR is deregistered (and its memory freed) right after a 1 MiB RDMA Write from it was
        // posted. Both lab providers hold the pages pinned for a posted WR (rxe over loopback moves the data
        // within the post and its softirq; siw's WR holds a reference on the memory it sends from until it
        // completes): the Write completes SUCCESS and every byte arrives.
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), size);
             SendRequest wr = p.client().queuePair().newSendRequest(1, 1)) {
            FaultRig.fill(p.clientMr(), 0, size, 5);
            p.client().queuePair().postSend(wr.wrId(3).opcode(0, Opcode.RDMA_WRITE).sge(p.clientMr(), 0, size)
                    .remote(p.atServer().address(), p.atServer().rkey()));
            long t = System.nanoTime();
            p.clientMr().close();
            long closeMs = (System.nanoTime() - t) / 1_000_000;
            Outcome o = FaultRig.watch(p.client(), t, Duration.ofSeconds(10), Duration.ZERO);
            report(device, "MR deregistered while a 1 MiB RDMA Write from it is in flight",
                    "dereg took " + closeMs + " ms; " + o);
            assertEquals(1, o.succeeded(), o.toString());
            assertNull(o.error(), o.toString());
            assertTrue(FaultRig.awaitMatch(p.serverMr(), 0, size, 5), "the 1 MiB written arrived intact");
        }
    }

    /**
     * The PD owns the QP and the MR: closing it closes them first (the QP through rdma_destroy_qp, no
     * rdma_disconnect). What the peer learns is the transport's: on RoCEv2 nothing (the IB CM sends no
     * DREQ for a destroyed QP, and RC has no keep-alive: the peer finds out when it next sends); on iWARP
     * the TCP stream closes with the QP, so the peer sees DISCONNECTED and its receive flushed.
     */
    @OnEveryLabTransport
    void closingAProtectionDomainUnderALiveConnection(Transport transport) throws Exception {
        String device = LabDevices.select(transport).device().name();
        try (CmPair p = FaultRig.cmPair(transport, ConnectionOptions.defaults(), 4096);
             ReceiveRequest recv = p.server().queuePair().newReceiveRequest(1, 1)) {
            p.server().queuePair().postRecv(recv.wrId(1).sge(p.serverMr(), 0, 64));
            QueuePair qp = p.client().queuePair();
            p.client().protectionDomain().close();
            assertTrue(qp.isClosed() && p.clientMr().isClosed() && p.client().protectionDomain().isClosed());
            assertThrows(ClosedResourceException.class, () -> qp.newSendRequest(1, 1));
            Outcome server = FaultRig.watch(p.server(), System.nanoTime(), Duration.ofSeconds(10), GRACE);
            report(device, "client's PD closed under a live connection (server has a receive posted)",
                    "client QP and MR closed first; server saw " + server);
            if (transport == Transport.IWARP) {
                assertEquals(CmEventType.DISCONNECTED, server.event(), server.toString());
                assertEquals(WcStatus.WR_FLUSH_ERR, server.error(), server.toString());
            } else {
                assertNull(server.event(), server.toString());
                assertNull(server.error(), server.toString());
            }
        }
    }

    @Test
    void closingAProtectionDomainUnderLiveQueuePairsOnRoce() throws Exception {
        try (OobPair p = new OobPair(16, 4096, 16);
             ReceiveRequest recv = p.b.newReceiveRequest(1, 1);
             SendRequest wr = p.a.newSendRequest(1, 1);
             CompletionBatch batch = new CompletionBatch(8)) {
            p.b.postRecv(recv.wrId(1).sge(p.mrB, 0, 64));
            p.a.postSend(wr.wrId(2).opcode(0, Opcode.RDMA_WRITE).sge(p.mrA, 0, 4096).remote(p.mrB.address(), p.mrB.rkey()));
            p.pd.close();
            assertTrue(p.a.isClosed() && p.b.isClosed() && p.mrA.isClosed() && p.mrB.isClosed());
            int a = p.cqA.poll(batch), b = p.cqB.poll(batch);
            report(p.ctx.device().name(), "PD closed with a write and a receive outstanding (out-of-band QPs)",
                    "QPs and MRs closed first, then the PD; CQ A then held " + a + ", CQ B " + b + " completions");
            // The CQs outlive the QPs and close cleanly now that nothing uses them.
            p.cqA.close();
            p.cqB.close();
        }
    }

    @Test
    void aMemoryRegionOfAnotherPdIsAProtectionError() throws Exception {
        try (OobPair p = new OobPair(16, 4096, 16); CompletionBatch batch = new CompletionBatch(4)) {
            ProtectionDomain other = p.ctx.allocateProtectionDomain();
            MemoryRegion foreign = other.allocate(4096);
            try (SendRequest wr = p.a.newSendRequest(1, 1)) {
                p.a.postSend(wr.wrId(4).opcode(0, Opcode.RDMA_WRITE).sge(foreign, 0, 64).remote(p.mrB.address(), p.mrB.rkey()));
                assertEquals(1, p.cqA.pollUntil(batch, LIMIT));
                report(p.ctx.device().name(), "SGE with an lkey of another PD", batch.status(0).describe() + ", QP " + p.a.state());
                assertNotEquals(WcStatus.SUCCESS, batch.status(0));
            }
        }
    }
}
