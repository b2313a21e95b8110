package org.rdmapanama.bench.failover;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.failover.FailoverListener;
import org.rdmapanama.failover.TransportFailover;
import org.rdmapanama.failover.TransportFailure;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The stream of {@code rdma-bench failover}: the client Sends message
 * {@code n} (its number and a check word derived from it), the server checks
 * that it is the next one and Sends it back; the client sends {@code n + 1}
 * once {@code n} is back. The client's connect says how many messages there
 * will be; the server's accept says which one it expects next, so a client
 * that reconnects on another transport resumes exactly there: the server
 * counts gaps, duplicates and bad check words, all of which must stay 0.
 */
final class FailoverStream {
    private FailoverStream() {}

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

    private static void closeQuietly(RdmaConnection c) {
        if (c != null) {
            try {
                c.close();
            } catch (RdmaException e) {
                System.err.println(now() + " closing the connection on " + c + ": " + e.getMessage());
            }
        }
    }

    static String now() {
        return LocalTime.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }

    static String on(RdmaConnection c) {
        return c.context().device().name() + " (" + c.context().transport().displayName() + ")";
    }

    /** One leg of the stream: messages {@code from} .. {@code to - 1} on one connection. */
    record Leg(String on, long from, long to) {
        @Override
        public String toString() {
            return on + " " + (to > from ? from + ".." + (to - 1) : "none");
        }
    }

    // --- the client ---

    static int stream(FailoverCommand.Options o, PrintStream out) throws Exception {
        out.println(now() + " failover client: " + o.messages() + " messages, routes " + o.routes() + ", reconnect "
                + (o.policy().reconnect() ? "on" : "off"));
        TransportFailover failover = new TransportFailover(o.routes(), o.policy(), e -> out.println(e + "  [failover]"));
        TransportFailover.Setup announce = c -> number(o.messages()); // the server learns when the stream ends
        RdmaConnection c = failover.connect(announce);
        List<Leg> legs = new ArrayList<>();
        long n = number(c.peerPrivateData()), sent = 0, every = Math.max(1, o.messages() / 20);
        int failures = 0, reconnects = 0;
        try {
            while (true) {
                long from = n;
                out.println(now() + " streaming on " + on(c) + " from message " + n);
                TransportFailure failure = null;
                MemoryRegion mr = c.protectionDomain().allocate(2 * MSG);
                try (SendRequest send = c.queuePair().newSendRequest(1, 1).wrId(1).opcode(0, Opcode.SEND).sge(mr, 0, MSG);
                     ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1).wrId(2).sge(mr, MSG, MSG);
                     CompletionBatch batch = new CompletionBatch(4)) {
                    while (n < o.messages() && failure == null) {
                        failure = roundTrip(c, mr, send, recv, batch, n, o.stall());
                        sent++;
                        if (failure == null && ++n % every == 0) {
                            out.println(now() + " " + n + " messages echoed, on " + on(c));
                        }
                        if (failure == null && !o.interval().isZero()) {
                            Thread.sleep(o.interval());
                        }
                    }
                }
                legs.add(new Leg(on(c), from, n));
                if (failure == null) {
                    break;
                }
                failures++;
                out.println(now() + " message " + n + " on " + on(c) + ": " + failure);
                RdmaConnection next = failover.failed(c, failure, announce);
                if (next == null) {
                    summary(out, o, n, sent, legs, failures, reconnects);
                    return CliArgs.FAILED;
                }
                c = next;
                reconnects++;
                long resume = number(c.peerPrivateData());
                out.println(now() + " reconnected on " + on(c) + "; the server expects message " + resume
                        + " (the last one echoed here was " + (n - 1) + ")");
                if (resume != n) {
                    throw new RdmaException("the server expects message " + resume + ", but " + n + " is next here");
                }
            }
            c.disconnect();
        } finally {
            closeQuietly(c);
        }
        summary(out, o, n, sent, legs, failures, reconnects);
        return n == o.messages() ? CliArgs.OK : CliArgs.FAILED;
    }

    private static void summary(PrintStream out, FailoverCommand.Options o, long n, long sent, List<Leg> legs,
                                int failures, int reconnects) {
        out.println(now() + " failover client: " + n + " of " + o.messages() + " messages echoed in order ("
                + sent + " sent, " + (sent - n) + " lost to a failure" + (reconnects > 0 ? " and sent again" : "")
                + "); " + failures
                + " transport failure(s), " + reconnects + " reconnect(s); legs: " + legs);
    }

    /** One numbered round trip: null when it came back intact, else why not. */
    static TransportFailure roundTrip(RdmaConnection c, MemoryRegion mr, SendRequest send, ReceiveRequest recv,
                                      CompletionBatch batch, long n, Duration stall) throws Exception {
        c.queuePair().postRecv(recv);
        mr.segment().set(JAVA_LONG_UNALIGNED, 0, n);
        mr.segment().set(JAVA_LONG_UNALIGNED, 8, check(n));
        c.queuePair().postSend(send);
        int done = 0;
        long deadline = System.nanoTime() + stall.toNanos();
        while (done < 2) {
            int k = c.completionQueue().poll(batch);
            if (k == 0) {
                if (System.nanoTime() - deadline > 0) {
                    return new TransportFailure(TransportFailure.Reason.TIMEOUT, "no completion within " + stall.toSeconds() + " s");
                }
                Thread.onSpinWait();
            }
            for (int i = 0; i < k; i++) {
                if (!batch.isSuccess(i)) {
                    return TransportFailure.completion(batch.status(i));
                }
                done++;
            }
        }
        if (mr.segment().get(JAVA_LONG_UNALIGNED, MSG) != n || mr.segment().get(JAVA_LONG_UNALIGNED, MSG + 8) != check(n)) {
            throw new RdmaException("message " + n + " came back altered");
        }
        return null;
    }

    // --- the server ---

    /** Serves one client; a new connection from it supersedes the one before (it failed over). */
    static int serve(FailoverCommand.Options o, PrintStream out) throws Exception {
        ConnectionOptions opts = ConnectionOptions.defaults().withDepth(4, 4);
        long expected = 0, total = -1, duplicates = 0, gaps = 0, bad = 0, idleSince = System.nanoTime();
        List<Leg> legs = new ArrayList<>();
        long legFrom = 0;
        RdmaConnection current = null;
        try (FailoverListener listener = FailoverListener.bind(o.listen(), 4, opts);
             CompletionBatch batch = new CompletionBatch(8)) {
            out.println(now() + " failover server: listening on " + o.listen());
            MemoryRegion mr = null;
            SendRequest echo = null;
            ReceiveRequest recv = null;
            boolean broken = false;
            while (total < 0 || expected < total) {
                RdmaConnection next = listener.accept(current == null || broken ? Duration.ofMillis(100) : Duration.ZERO);
                if (next != null) {
                    if (current != null) {
                        legs.add(new Leg(on(current), legFrom, expected));
                        out.println(now() + " the client is back on " + on(next) + ": closing its connection on "
                                + on(current) + (broken ? " (failed)" : " (it saw it fail)"));
                        closeQuietly(current);
                    }
                    current = next;
                    broken = false;
                    total = number(next.peerPrivateData());
                    mr = next.protectionDomain().allocate(2 * MSG);
                    echo = next.queuePair().newSendRequest(1, 1).wrId(1).opcode(0, Opcode.SEND).sge(mr, MSG, MSG);
                    recv = next.queuePair().newReceiveRequest(1, 1).wrId(2).sge(mr, 0, MSG);
                    next.queuePair().postRecv(recv);
                    next.accept(number(expected), T);
                    legFrom = expected;
                    out.println(now() + " accepted on " + on(next) + ": " + total + " messages, expecting " + expected);
                    idleSince = System.nanoTime();
                    continue;
                }
                if (System.nanoTime() - idleSince > o.stall().toNanos() * 3) {
                    throw new RdmaException("nothing from the client for " + o.stall().multipliedBy(3).toSeconds() + " s");
                }
                if (current == null || broken) {
                    continue;
                }
                int k = current.completionQueue().poll(batch);
                if (k == 0) {
                    Thread.yield(); // one vCPU per lab host: let the rdma_cm loop thread take a request
                }
                for (int i = 0; i < k; i++) {
                    if (!batch.isSuccess(i)) {
                        broken = true;
                        out.println(now() + " connection on " + on(current) + ": "
                                + TransportFailure.completion(batch.status(i)) + "; waiting for the client to reconnect");
                        break;
                    }
                    idleSince = System.nanoTime();
                    if (batch.wrId(i) != 2) {
                        continue;
                    }
                    long got = mr.segment().get(JAVA_LONG_UNALIGNED, 0);
                    bad += mr.segment().get(JAVA_LONG_UNALIGNED, 8) == check(got) ? 0 : 1;
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
            legs.add(new Leg(on(current), legFrom, expected));
            current.awaitDisconnect(Duration.ofSeconds(10)); // the last echo's way back
        } finally {
            closeQuietly(current);
        }
        boolean ok = duplicates == 0 && gaps == 0 && bad == 0;
        out.println(now() + " failover server: " + expected + " of " + total + " messages received in order; gaps "
                + gaps + ", duplicates " + duplicates + ", bad check words " + bad + "; legs: " + legs
                + (ok ? "; verified" : "; NOT verified"));
        return ok ? CliArgs.OK : CliArgs.FAILED;
    }
}
