package org.rdmapanama.failover;

import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A numbered echo for the failover tests: the client Sends message {@code n}
 * (its number and a check word), the server checks it is the next one and
 * Sends it back. The server says in its accept's private data which number it
 * expects, so a client that reconnects resumes there: nothing is lost or
 * counted twice across transports. Both sides nap when idle, as they share
 * the test JVM's one vCPU.
 */
final class FailoverEcho {
    private FailoverEcho() {}

    static final Duration T = Duration.ofSeconds(30);
    static final int MSG = 16;

    static long check(long n) {
        return n * 0x9E3779B97F4A7C15L;
    }

    static byte[] number(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }

    static long number(byte[] data) {
        return ByteBuffer.wrap(data, 0, 8).getLong();
    }

    /** Polls once; naps 1 ms when nothing came. */
    static int pollOrNap(RdmaConnection c, CompletionBatch batch) throws RdmaException, InterruptedException {
        int n = c.completionQueue().poll(batch);
        if (n == 0) {
            Thread.sleep(1);
        }
        return n;
    }

    /** Serves one client at a time; a new connection supersedes the one before (the client moved). */
    static final class Server implements Runnable {
        final FailoverListener listener;
        final List<String> log = new CopyOnWriteArrayList<>();
        final List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        volatile long expected;
        volatile int duplicates, gaps, badChecks;
        volatile boolean stop;
        volatile Throwable crashed;

        Server(FailoverListener listener) {
            this.listener = listener;
        }

        @Override
        public void run() {
            RdmaConnection current = null;
            try (CompletionBatch batch = new CompletionBatch(8)) {
                MemoryRegion mr = null;
                SendRequest echo = null;
                ReceiveRequest recv = null;
                boolean broken = false;
                while (!stop) {
                    RdmaConnection next = listener.accept(current == null ? Duration.ofMillis(100) : Duration.ZERO);
                    if (next != null) {
                        if (current != null) {
                            log.add("superseded " + current.context().device().name());
                            Cleanup.closeQuietly(current);
                        }
                        current = next;
                        served.add(next);
                        broken = false;
                        mr = next.protectionDomain().allocate(2 * MSG);
                        echo = next.queuePair().newSendRequest(1, 1).wrId(1).opcode(0, Opcode.SEND).sge(mr, MSG, MSG);
                        recv = next.queuePair().newReceiveRequest(1, 1).wrId(2).sge(mr, 0, MSG);
                        next.queuePair().postRecv(recv);
                        next.accept(number(expected), T);
                        log.add("accepted on " + next.context().device().name() + ", expecting " + expected);
                        continue;
                    }
                    if (current == null || broken) {
                        Thread.sleep(1);
                        continue;
                    }
                    int n = pollOrNap(current, batch);
                    for (int i = 0; i < n; i++) {
                        if (!batch.isSuccess(i)) {
                            broken = true; // only reported: the client decides where to go
                            log.add("on " + current.context().device().name() + ": "
                                    + TransportFailure.completion(batch.status(i)));
                            break;
                        }
                        if (batch.wrId(i) != 2) {
                            continue;
                        }
                        long got = mr.segment().get(JAVA_LONG_UNALIGNED, 0);
                        if (mr.segment().get(JAVA_LONG_UNALIGNED, 8) != check(got)) {
                            badChecks++;
                        }
                        if (got == expected) {
                            expected++;
                        } else if (got < expected) {
                            duplicates++;
                        } else {
                            gaps++;
                        }
                        mr.segment().set(JAVA_LONG_UNALIGNED, MSG, got);
                        mr.segment().set(JAVA_LONG_UNALIGNED, MSG + 8, check(got));
                        current.queuePair().postRecv(recv); // before the echo: the client sends on when it sees it
                        current.queuePair().postSend(echo);
                    }
                }
            } catch (Throwable e) {
                crashed = e;
            } finally {
                Cleanup.closeQuietly(current);
            }
        }
    }

    /** One numbered round trip on {@code c}: null when it came back intact, else why not. */
    static TransportFailure roundTrip(RdmaConnection c, MemoryRegion mr, SendRequest send, ReceiveRequest recv,
                                      CompletionBatch batch, long n, Duration limit) throws Exception {
        c.queuePair().postRecv(recv);
        mr.segment().set(JAVA_LONG_UNALIGNED, 0, n);
        mr.segment().set(JAVA_LONG_UNALIGNED, 8, check(n));
        c.queuePair().postSend(send);
        int done = 0;
        long deadline = System.nanoTime() + limit.toNanos();
        while (done < 2) {
            if (System.nanoTime() - deadline > 0) {
                return new TransportFailure(TransportFailure.Reason.TIMEOUT, "no completion within " + limit);
            }
            int k = pollOrNap(c, batch);
            for (int i = 0; i < k; i++) {
                if (!batch.isSuccess(i)) {
                    return TransportFailure.completion(batch.status(i));
                }
                done++;
            }
        }
        long back = mr.segment().get(JAVA_LONG_UNALIGNED, MSG);
        if (back != n || mr.segment().get(JAVA_LONG_UNALIGNED, MSG + 8) != check(n)) {
            throw new AssertionError("message " + n + " came back as " + back);
        }
        return null;
    }
}
