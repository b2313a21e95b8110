package org.rdmapanama.bench.perftest;

import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The other end of the local warm-up's loopback connection ({@link PerftestLoopback}) in Send tests, on a
 * thread of its own: it echoes send_lat's Sends, keeps receives posted for send_bw's client (and its
 * credits where there is no receiver-not-ready retry), and sends for a send_bw server. It parks between
 * empty polls, so that it shares the benchmark's one pinned vCPU (the lab's) without taking turns a
 * scheduler slice at a time. Its requests and memory are the loopback's, which closes them once it ended.
 */
final class PerftestPartner implements Runnable {
    private static final long PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    private static final VarHandle CREDIT = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle SIZE_CREDIT = ValueLayout.JAVA_INT.varHandle();

    /** What the partner does: nothing (no Sends), echo, receive, or send. */
    enum Mode { NONE, ECHO, SINK, SOURCE }

    private final PerftestOptions o;
    private final Mode mode;
    private final RdmaConnection b;
    private final SendRequest bsend;
    private final ReceiveRequest brecv;
    private final CompletionBatch bbatch;
    /** The loop end's: its control word holds the credits. */
    private final PerftestPath path;
    private volatile boolean stop;
    private volatile Throwable failure;
    /** Sends the SINK partner has received, in all: the loop end waits for it between sizes (native credits). */
    private volatile long sinkReceived;

    PerftestPartner(PerftestOptions o, Mode mode, RdmaConnection b, SendRequest bsend, ReceiveRequest brecv,
                    CompletionBatch bbatch, PerftestPath path) {
        this.o = o;
        this.mode = mode;
        this.b = b;
        this.bsend = bsend;
        this.brecv = brecv;
        this.bbatch = bbatch;
        this.path = path;
    }

    /** From any thread: the loop ends at its next poll. */
    void stop() {
        stop = true;
    }

    /** The other end's part; parks between empty polls. Ends when {@link #stop} is called. */
    @Override
    public void run() {
        QueuePair bq = b.queuePair();
        CompletionQueue bcq = b.completionQueue();
        // Without receiver-not-ready retry (iWARP) Sends keep to the receiver's credits, in the loop end's own
        // control word, in the format the run will use, so that the JIT compiles the run's branches (one it
        // never saw traps at the run's first credit check and leaves the timed loop interpreted). As a server
        // the loop end RDMA-writes our 64-bit count there through the alias, and SOURCE reads it: SOURCE cannot
        // tell where a size begins, so a Java server against a native client is still warmed on our format;
        // the loop end's credit write takes one path for both formats (PerftestControl#writeCredit).
        // As a client against a native peer, SINK adds 1 per receive to perftest's 32-bit per-size count,
        // which the loop end zeroes per size once SINK has received all it sent (awaitSink); else SINK stores
        // our 64-bit count.
        boolean credits = !b.context().transport().retriesReceiverNotReady();
        boolean sizeCredits = path.nativeCredits();
        long creditAt = 2L * path.slot() + PerftestControl.CTRL_CREDIT;
        long posted = 0, completed = 0, received = 0;
        try {
            while (!stop) {
                if (mode == Mode.SOURCE) {
                    while (posted - completed < o.txDepth
                            && (!credits || posted - (long) CREDIT.getAcquire(path.mem(), creditAt) < o.rxDepth())) {
                        bq.postSend(bsend);
                        posted++;
                    }
                }
                int n = bcq.poll(bbatch);
                if (n == 0) {
                    LockSupport.parkNanos(PARK_NANOS);
                    continue;
                }
                for (int i = 0; i < n; i++) {
                    bbatch.requireSuccess(i);
                    if (bbatch.wrId(i) == PerftestLink.RECV_ID) {
                        bq.postRecv(brecv);
                        if (credits && mode == Mode.SINK) {
                            if (sizeCredits) {
                                SIZE_CREDIT.getAndAddRelease(path.mem(), creditAt, 1);
                                sinkReceived = ++received;
                            } else {
                                CREDIT.setRelease(path.mem(), creditAt, ++received);
                            }
                        }
                        if (mode == Mode.ECHO) {
                            bq.postSend(bsend);
                        }
                    } else {
                        completed++;
                    }
                }
            }
        } catch (RdmaException | RuntimeException e) {
            if (!stop) {
                failure = e;
            }
        }
    }

    void throwIfFailed() throws RdmaException {
        Throwable f = failure;
        if (f != null) {
            throw new RdmaException("the partner end failed: " + f.getMessage(), f);
        }
    }

    /** Waits until the SINK partner has received {@code sent} Sends (all the loop end posted so far). */
    void awaitSink(long sent, Duration timeout) throws RdmaException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (sinkReceived < sent) {
            throwIfFailed();
            if (stop || System.nanoTime() - deadline > 0) {
                throw new RdmaException("the partner end received " + sinkReceived + " of " + sent
                        + " Sends within " + timeout.toSeconds() + " s");
            }
            LockSupport.parkNanos(PARK_NANOS);
        }
    }
}
