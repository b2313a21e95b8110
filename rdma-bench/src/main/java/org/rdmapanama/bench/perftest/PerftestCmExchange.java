package org.rdmapanama.bench.perftest;

import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * perftest's exchange with {@code -R}: every block is one Send on a first
 * rdma_cm connection of its own (perftest's "communication" QP), before and
 * beside the data connection. One receive is kept posted, from before the
 * connection is set up (siw has no RNR retry): the protocol alternates, so at
 * most one block is in flight each way. QP addresses travel as perftest's
 * {@code struct pingpong_dest} ({@link PerftestKeys#encodeStruct}), and no
 * "done" follows the last handshake.
 * <p>
 * Owns the connection, which it disconnects and closes. One thread.
 */
final class PerftestCmExchange extends PerftestExchange {
    /** Every block fits: the largest is {@code struct pingpong_dest}, 56 bytes. */
    private static final int BLOCK = 64;
    private static final long SEND_ID = 1, RECV_ID = 2;
    private static final long SPIN_NANOS = Duration.ofMillis(1).toNanos();

    private final RdmaConnection conn;
    private final MemorySegment mem;
    private final SendRequest send;
    private final ReceiveRequest recv;
    private final CompletionBatch batch = new CompletionBatch(4);
    private final MemoryRegion mr;
    private final int gidIndex;
    private boolean sent;
    private boolean received;
    private int receivedLength;
    private int sentLength;
    /** A receive that failed while we waited for a Send: reported when the next block is awaited. */
    private String recvFailure;

    /** Call before the connection is accepted or connected: the first receive is posted here. */
    PerftestCmExchange(RdmaConnection conn, boolean client, int gidIndex) throws RdmaException {
        super(client);
        this.conn = conn;
        this.gidIndex = gidIndex;
        mr = conn.protectionDomain().allocate(2 * BLOCK);
        mem = mr.segment();
        send = conn.queuePair().newSendRequest(1, 1);
        send.opcode(0, Opcode.SEND).wrId(SEND_ID).signaled(0, true);
        recv = conn.queuePair().newReceiveRequest(1, 1);
        recv.wrId(RECV_ID).sge(mr, BLOCK, BLOCK);
        conn.queuePair().postRecv(recv);
    }

    RdmaConnection connection() {
        return conn;
    }

    @Override
    void write(byte[] b) throws RdmaException {
        post(b);
        awaitSent();
    }

    /** Posts one block's Send; {@link #awaitSent} completes it. */
    void post(byte[] b) throws RdmaException {
        MemorySegment.copy(b, 0, mem, JAVA_BYTE, 0, b.length);
        send.sge(mr, 0, b.length);
        sent = false;
        sentLength = b.length;
        conn.queuePair().postSend(send);
    }

    void awaitSent() throws RdmaException {
        await(true, Duration.ofSeconds(30), "the Send of " + sentLength + " bytes to complete");
    }

    @Override
    byte[] read(int n, Duration timeout) throws RdmaException {
        await(false, timeout, "the peer's next block (" + n + " bytes)");
        if (receivedLength < n) {
            throw new RdmaException("the peer sent " + receivedLength + " bytes where perftest sends " + n
                    + " (is it perftest 4.5 or rdma-bench, running the same test with the same flags?)");
        }
        byte[] b = new byte[n];
        MemorySegment.copy(mem, JAVA_BYTE, BLOCK, b, 0, n);
        received = false;
        conn.queuePair().postRecv(recv); // before our next Send: the peer's next block answers it
        return b;
    }

    /** Polls until our Send completed ({@code send}) or a block arrived; spins a little, then parks. */
    private void await(boolean forSend, Duration timeout, String what) throws RdmaException {
        long start = System.nanoTime();
        while (forSend ? !sent : !received) {
            int n = conn.completionQueue().poll(batch);
            for (int i = 0; i < n; i++) {
                boolean isSend = batch.wrId(i) == SEND_ID;
                if (!batch.isSuccess(i)) {
                    // A peer that leaves right after our last block flushes the receive we keep posted, often
                    // in the same poll as that block's Send completion: only the awaited side's failure counts.
                    if (isSend || !forSend) {
                        throw failed(batch.status(i).describe(), what);
                    }
                    recvFailure = batch.status(i).describe();
                } else if (isSend) {
                    sent = true;
                } else {
                    received = true;
                    receivedLength = batch.byteLength(i);
                }
            }
            if (!forSend && !received && recvFailure != null) {
                throw failed(recvFailure, what);
            }
            long waited = System.nanoTime() - start;
            if (n == 0 && waited > SPIN_NANOS) {
                // A passive side waits here for the peer's whole run, on a vCPU the peer may need.
                LockSupport.parkNanos(SPIN_NANOS);
            }
            if (waited > timeout.toNanos()) {
                throw new RdmaException("no progress in " + timeout.toSeconds() + " s waiting for " + what
                        + ": is the peer still running the same test with the same flags?");
            }
        }
    }

    private static RdmaException failed(String status, String what) {
        return new RdmaException("the exchange connection failed: " + status + " while waiting for " + what
                + " (did the peer go away?)");
    }

    @Override
    String peerGone() {
        return null; // the data connection's rdma_cm events tell (PerftestPeerWatch)
    }

    @Override
    byte[] encodeKeys(PerftestKeys mine) {
        return mine.encodeStruct(gidIndex);
    }

    @Override
    PerftestKeys decodeKeys(byte[] msg, PerftestKeys mine) {
        return PerftestKeys.decodeStruct(msg);
    }

    @Override
    boolean writesDone() {
        return false;
    }

    @Override
    public void close() throws RdmaException {
        send.close();
        recv.close();
        batch.close();
        try {
            conn.disconnect();
        } catch (RdmaException e) {
            // the peer may have left first; closing anyway
        } finally {
            conn.close();
        }
    }
}
