package org.rdmapanama.bench.rping;

import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;
import org.rdmapanama.verbs.WcStatus;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;

/**
 * One side of an rping connection: its buffers, its pre-built work requests,
 * and the protocol loop of the client or the server. rping's steps, per ping:
 * <ol>
 *   <li>client: SEND {@code struct rping_rdma_info} (be64 buf, be32 rkey, be32 size) of its source buffer;</li>
 *   <li>server: RDMA Read of that buffer, then SEND "go ahead" (16 bytes, content unused);</li>
 *   <li>client: SEND the info of its sink buffer;</li>
 *   <li>server: RDMA Write of its copy ({@code strlen + 1} bytes) into the sink, then SEND "done".</li>
 * </ol>
 * Every message is exactly 16 bytes and each side keeps one receive posted,
 * reposted as soon as it completes, as rping does. Completions are routed by
 * {@code wr_id}. The peer leaving shows as a DISCONNECTED rdma_cm event or as
 * flushed work requests, whichever comes first.
 * <p>
 * Owns the connection it is given (closing the peer closes it) from the
 * moment {@link #client} or {@link #server} is called, even if that fails.
 * Single-threaded: the thread that runs the command.
 */
final class RpingPeer implements AutoCloseable {
    /** {@code sizeof(struct rping_rdma_info)}. */
    static final int INFO_SIZE = 16;
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final int RECV_WRID = 0;
    private static final int SEND_WRID = 1;
    private static final int READ_WRID = 2;
    private static final int WRITE_WRID = 3;

    /** A peer that stops answering ends the run instead of hanging it (rping itself would wait forever). */
    private static final Duration STALL = Duration.ofSeconds(30);
    /** While no completion comes, look for rdma_cm events (DISCONNECTED) this often. */
    private static final long CM_CHECK_NANOS = 5_000_000;
    private static final Duration CM_CHECK_WAIT = Duration.ofMillis(1);

    private final RdmaConnection conn;
    private final RpingCommand.Options options;
    private final PrintStream out;
    private final String peerName;
    private final QueuePair qp;
    private final CompletionQueue cq;
    private final CompletionBatch batch = new CompletionBatch(16);
    private MemoryRegion recvBuf;
    private MemoryRegion sendBuf;
    private MemoryRegion rdmaBuf;
    private MemoryRegion startBuf;
    private ReceiveRequest recv;
    private SendRequest send;
    private SendRequest rdma;
    private final long[] posted = new long[4];
    private final long[] completed = new long[4];
    private final RpingData pingData = new RpingData();
    private boolean peerGone;
    private long lastCmCheck;
    // The last rping_rdma_info received (the server's view of the client's buffer).
    private long remoteAddr;
    private int remoteRkey;
    private int remoteLength;

    private RpingPeer(RdmaConnection conn, RpingCommand.Options options, PrintStream out, boolean client)
            throws RdmaException {
        this.conn = conn;
        this.options = options;
        this.out = out;
        this.peerName = client ? "the server" : "the client";
        this.qp = conn.queuePair();
        this.cq = conn.completionQueue();
        boolean ok = false;
        try {
            ProtectionDomain pd = conn.protectionDomain();
            recvBuf = pd.allocate(INFO_SIZE);
            sendBuf = pd.allocate(INFO_SIZE);
            // rping's access for the RDMA buffers. On iWARP the sink of an RDMA Read needs REMOTE_WRITE.
            rdmaBuf = pd.allocate(options.size(), Access.REMOTE_READ, Access.REMOTE_WRITE);
            if (client) {
                startBuf = pd.allocate(options.size(), Access.REMOTE_READ, Access.REMOTE_WRITE);
            }
            recv = qp.newReceiveRequest(1, 1).wrId(RECV_WRID).sge(recvBuf, 0, INFO_SIZE);
            send = qp.newSendRequest(1, 1).wrId(SEND_WRID).opcode(Opcode.SEND).sge(sendBuf, 0, INFO_SIZE);
            if (!client) {
                // One WR for both RDMA steps: opcode, wr_id, length and remote change per step.
                rdma = qp.newSendRequest(1, 1).opcode(Opcode.RDMA_READ).sge(rdmaBuf, 0, options.size());
            }
            debug("created pd, cq (%d entries) and qp %d on %s; buffers of %d bytes registered",
                    cq.size(), qp.qpNumber(), conn.context().device().name(), options.size());
            qp.postRecv(recv); // before connecting, so that the peer's first SEND finds it
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    static RpingPeer client(RdmaConnection conn, RpingCommand.Options options, PrintStream out) throws RdmaException {
        return new RpingPeer(conn, options, out, true);
    }

    static RpingPeer server(RdmaConnection conn, RpingCommand.Options options, PrintStream out) throws RdmaException {
        return new RpingPeer(conn, options, out, false);
    }

    // --- the client ---

    void runClient() throws RdmaException, InterruptedException {
        MemorySegment start = startBuf.segment();
        MemorySegment sink = rdmaBuf.segment();
        int count = options.count();
        for (int ping = 0; count == 0 || ping < count; ping++) {
            pingData.fill(start, ping);
            sink.fill((byte) 0); // so that -V sees what this ping's RDMA Write brought, not the last one's
            advertise(startBuf);
            awaitReply("its go-ahead after the RDMA Read", ping);
            advertise(rdmaBuf);
            awaitReply("its go-ahead after the RDMA Write", ping);
            if (options.validate()) {
                long at = start.mismatch(sink);
                if (at >= 0) {
                    throw new RdmaException("data mismatch in ping " + ping + " at byte " + at + " of "
                            + options.size() + ": sent '" + RpingData.text(start) + "', got back '" + RpingData.text(sink) + "'");
                }
            }
            if (options.verbose()) {
                out.println("ping data: " + RpingData.text(sink));
            }
        }
    }

    /** SENDs the address, rkey and size of {@code mr}, once the previous SEND has left the buffer. */
    private void advertise(MemoryRegion mr) throws RdmaException, InterruptedException {
        await(SEND_WRID, posted[SEND_WRID], "the completion of our last send");
        MemorySegment info = sendBuf.segment();
        info.set(BE64, 0, mr.address());
        info.set(BE32, 8, mr.rkey());
        info.set(BE32, 12, options.size());
        debug("RDMA addr %x rkey %x len %d", mr.address(), mr.rkey(), options.size());
        post(send, SEND_WRID);
    }

    private void awaitReply(String what, int ping) throws RdmaException, InterruptedException {
        try {
            await(RECV_WRID, completed[RECV_WRID] + 1, what);
        } catch (PeerGoneException e) {
            throw new PeerGoneException(e.getMessage() + " (ping " + (ping + 1)
                    + (options.count() == 0 ? "" : " of " + options.count()) + ")");
        }
    }

    // --- the server ---

    /** Serves pings until the client disconnects between two of them. */
    void runServer() throws RdmaException, InterruptedException {
        MemorySegment data = rdmaBuf.segment();
        for (long ping = 0; ; ping++) {
            try {
                await(RECV_WRID, completed[RECV_WRID] + 1, "the next source advertisement");
            } catch (PeerGoneException e) {
                debug("%s disconnected after %d pings", peerName, ping);
                return; // rping's normal end: the client leaves when its count is done
            }
            try {
                servePing(data);
            } catch (PeerGoneException e) {
                throw new PeerGoneException(e.getMessage() + " (in ping " + (ping + 1) + ")");
            }
        }
    }

    private void servePing(MemorySegment data) throws RdmaException, InterruptedException {
        int length = remoteLength;
        if (length < 1 || length > options.size()) {
            throw new RdmaException("the client advertised a " + Integer.toUnsignedString(length)
                    + "-byte buffer; this server takes 1 to " + options.size() + " bytes (-S)");
        }
        debug("received rkey %x addr %x len %d from peer", remoteRkey, remoteAddr, length);
        rdma.wrId(READ_WRID).opcode(Opcode.RDMA_READ).sge(rdmaBuf, 0, length).remote(remoteAddr, remoteRkey);
        post(rdma, READ_WRID);
        await(READ_WRID, posted[READ_WRID], "the RDMA Read of the client's source buffer");
        if (options.verbose()) {
            out.println("server ping data: " + RpingData.text(data.asSlice(0, length)));
        }
        post(send, SEND_WRID); // go ahead
        await(RECV_WRID, completed[RECV_WRID] + 1, "the sink advertisement");
        // rping writes strlen + 1 bytes; never more than was read, nor than the sink holds.
        int write = Math.min(Math.min(RpingData.strlen(data, length) + 1, length), Math.max(0, remoteLength));
        debug("rdma write of %d bytes to rkey %x addr %x", write, remoteRkey, remoteAddr);
        rdma.wrId(WRITE_WRID).opcode(Opcode.RDMA_WRITE).sge(rdmaBuf, 0, write).remote(remoteAddr, remoteRkey);
        post(rdma, WRITE_WRID);
        await(WRITE_WRID, posted[WRITE_WRID], "the RDMA Write into the client's sink buffer");
        post(send, SEND_WRID); // done
    }

    // --- completions ---

    private void post(SendRequest wr, int wrId) throws RdmaException {
        qp.postSend(wr);
        posted[wrId]++;
    }

    /**
     * Polls until {@code completed[wrId]} reaches {@code target}; between
     * empty polls, spins, and every few ms looks for a DISCONNECTED event.
     */
    private void await(int wrId, long target, String what) throws RdmaException, InterruptedException {
        long begin = System.nanoTime();
        while (completed[wrId] < target) {
            if (peerGone) {
                throw new PeerGoneException(peerName + " disconnected while we waited for " + what);
            }
            int n = cq.poll(batch);
            for (int i = 0; i < n; i++) {
                completion(i, what);
            }
            if (n == 0) {
                long now = System.nanoTime();
                if (now - lastCmCheck >= CM_CHECK_NANOS) {
                    checkEvents();
                    lastCmCheck = System.nanoTime();
                    if (now - begin > STALL.toNanos()) {
                        throw new RdmaException("no answer from " + peerName + " in " + STALL.toSeconds()
                                + " s while waiting for " + what);
                    }
                } else {
                    Thread.onSpinWait();
                }
            }
        }
    }

    private void completion(int i, String what) throws RdmaException {
        int wrId = (int) batch.wrId(i);
        if (!batch.isSuccess(i)) {
            if (batch.status(i) == WcStatus.WR_FLUSH_ERR) {
                peerGone = true; // the QP is in error: the connection is going down; nothing completed
                return;
            }
            throw new RdmaException(operation(wrId) + " failed: " + batch.status(i).describe()
                    + (batch.vendorError(i) != 0 ? ", vendor error 0x" + Integer.toHexString(batch.vendorError(i)) : "")
                    + ", while waiting for " + what);
        }
        if (wrId == RECV_WRID) {
            int length = batch.byteLength(i);
            if (length != INFO_SIZE) {
                throw new RdmaException("received bogus data from " + peerName + ": " + length
                        + " bytes, an rping message has " + INFO_SIZE);
            }
            MemorySegment info = recvBuf.segment();
            remoteAddr = info.get(BE64, 0);
            remoteRkey = info.get(BE32, 8);
            remoteLength = info.get(BE32, 12);
            qp.postRecv(recv);
        }
        completed[wrId]++;
    }

    private void checkEvents() throws RdmaException, InterruptedException {
        CmEventType ev = conn.awaitEvent(CM_CHECK_WAIT);
        if (ev == CmEventType.DISCONNECTED) {
            debug("%s: DISCONNECTED", peerName);
            peerGone = true;
        } else if (ev == CmEventType.DEVICE_REMOVAL) {
            throw new RdmaException("the RDMA device " + conn.context().device().name() + " was removed");
        } else if (ev != null) {
            debug("ignoring rdma_cm event %s", ev.cName());
        }
    }

    private static String operation(int wrId) {
        return switch (wrId) {
            case RECV_WRID -> "a receive";
            case SEND_WRID -> "a send";
            case READ_WRID -> "the RDMA Read";
            case WRITE_WRID -> "the RDMA Write";
            default -> "work request " + wrId;
        };
    }

    void debug(String format, Object... args) {
        if (options.debug()) {
            out.printf(format + "%n", args);
        }
    }

    /**
     * Disconnects, frees the work requests and the completion array,
     * deregisters the buffers, then closes the connection (QP, CQ, PD, cm_id).
     */
    @Override
    public void close() throws RdmaException {
        RdmaException first = null;
        try {
            conn.disconnect(); // first, so that the peer no longer touches the buffers freed next
        } catch (RdmaException e) {
            first = e;
        }
        if (rdma != null) {
            rdma.close();
        }
        if (send != null) {
            send.close();
        }
        if (recv != null) {
            recv.close();
        }
        batch.close();
        for (MemoryRegion mr : new MemoryRegion[] {startBuf, rdmaBuf, sendBuf, recvBuf}) {
            if (mr != null) {
                try {
                    mr.close();
                } catch (RdmaException e) {
                    first = first == null ? e : first;
                }
            }
        }
        try {
            conn.close();
        } catch (RdmaException e) {
            first = first == null ? e : first;
        }
        if (first != null) {
            throw first;
        }
    }

    /** The peer disconnected (or its QP flushed) before the step we waited for. */
    static final class PeerGoneException extends RdmaException {
        PeerGoneException(String message) {
            super(message);
        }
    }
}
