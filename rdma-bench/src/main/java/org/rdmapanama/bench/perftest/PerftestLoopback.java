package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.JitActivity;
import org.rdmapanama.bench.perftest.PerftestOptions.Test;
import org.rdmapanama.cm.CmEventLoop;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The warm-up against native perftest, which has no unreported rounds: before
 * our test QP exists, this process connects to itself through rdma_cm on the
 * test's device and address (a listener on a free port, a connection to it:
 * the only way on iWARP, and the same code on RoCE), runs the test's own loops
 * ({@link PerftestLatency}, {@link PerftestBandwidth}, {@link PerftestCompletions})
 * on one end, round after round until the JIT has been idle for 1 s (at most
 * {@code --warmup} s, as the warm-up with an rdma-bench peer), then closes it all.
 * The real run then starts on the wire unchanged, on compiled code.
 * <p>
 * The loop end ("A", the connecting side) plays the role whose loop comes first
 * (write_lat's server, send_lat's client) and targets the other end's region,
 * which is A's own memory registered a second time in the other end's PD: RDMA
 * Writes, Reads and atomics then land where A polls, with no code on the
 * other end. Sends need a receiver: a partner thread on the other end echoes
 * send_lat's, keeps receives posted for send_bw's client, and sends for a
 * send_bw server; it parks between empty polls, so that it shares the
 * benchmark's one pinned vCPU (the lab's) without taking turns a scheduler slice at a time.
 * <p>
 * Why the native peer cannot tell: it runs after the version, system-data and MTU
 * blocks, where perftest waits for our next block with no timeout (a blocking
 * {@code read()} on the TCP socket; with {@code -R} a busy {@code ibv_poll_cq}),
 * and nothing is sent to it meanwhile. A warm-up that fails is reported on stderr
 * and the run goes on cold. It runs on a thread of its own, plus the partner, which it starts and joins,
 * on an rdma_cm event loop of its own, closed at the end (which checks that no cm_id is left open); the run
 * waits for it at most {@link #limitNanos}.
 */
final class PerftestLoopback {
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(10); // a loopback connection: quick or broken

    private PerftestLoopback() {}

    /**
     * The role the loop end plays for {@code test}, whose real run has us as {@code server}
     * (true: the server's loop): null when our side has no loop to warm (the passive servers
     * of read_lat, atomic_lat, write_bw and read_bw, which only wait in perftest's closing handshake).
     */
    static Boolean role(Test test, boolean server) {
        if (server && PerftestExchange.clientDriven(test)) {
            return null;
        }
        return switch (test) {
            case WRITE_LAT -> true;  // perftest's write_lat server writes first
            case SEND_LAT -> false;  // and send_lat's client sends first
            case READ_LAT, ATOMIC_LAT, WRITE_BW, READ_BW -> false;
            case SEND_BW -> server;
        };
    }

    private static PerftestPartner.Mode partner(Test test, boolean role) {
        return switch (test) {
            case SEND_LAT -> PerftestPartner.Mode.ECHO;
            case SEND_BW -> role ? PerftestPartner.Mode.SOURCE : PerftestPartner.Mode.SINK;
            default -> PerftestPartner.Mode.NONE;
        };
    }

    /**
     * Runs the warm-up and prints its stderr line; never throws, and never holds the run up for longer
     * than {@link #limitNanos}: it runs on a thread of its own, on an rdma_cm event loop of its own (so
     * that nothing of it stays on, or can stall, the shared loop the run and later runs in this process
     * use), and a warm-up past its limit is stopped (its connections disconnected, which fails its loops)
     * and, if that does not end it, left behind while the run goes on cold.
     */
    static void warmUp(PerftestOptions o, boolean server, int slot, DeviceContext device, PerftestExchange exchange,
                       PrintStream err) {
        long start = System.nanoTime();
        long limit = limitNanos(o);
        Pair p = new Pair();
        String[] line = new String[1];
        Thread t = Thread.ofPlatform().daemon().name("rdma-bench warm-up")
                .start(() -> line[0] = warmUp(o, server, slot, device, exchange, p, start));
        try {
            if (!t.join(Duration.ofNanos(limit))) {
                p.abort(); // its loops fail on the flushed work requests, and it closes everything
                if (!t.join(Duration.ofSeconds(10))) {
                    err.println(String.format("%s warm-up: abandoned after %.1f s on a loopback connection (past its "
                            + "limit of %d s); the run goes on cold, so its latencies include the JIT's work",
                            o.who(), (System.nanoTime() - start) / 1e9, TimeUnit.NANOSECONDS.toSeconds(limit)));
                    return;
                }
            }
        } catch (InterruptedException e) {
            p.abort();
            Thread.currentThread().interrupt();
            return;
        }
        err.print(line[0]);
    }

    /** How long a warm-up may take in all: its set-up, its rounds (at most --warmup s, plus a last round), its teardown. */
    static long limitNanos(PerftestOptions o) {
        return SETUP_TIMEOUT.multipliedBy(2).plusSeconds(o.warmupMaxSeconds + 15L).toNanos();
    }

    /** The warm-up on the calling thread; returns its stderr line. */
    private static String warmUp(PerftestOptions o, boolean server, int slot, DeviceContext device,
                                 PerftestExchange exchange, Pair p, long start) {
        boolean role = role(o.test, server);
        InetSocketAddress at = null;
        try (p) {
            at = new InetSocketAddress(device.selection().ipAddress(), freePort(device.selection().ipAddress()));
            int rd = PerftestDevice.outstandingReads(List.of(device.capabilities()));
            p.connect(o, role, slot, at, rd, exchange);
            int rounds = p.run(o, partner(o.test, role), start);
            p.close();
            if (p.leftOpen != null) {
                throw new RdmaException(p.leftOpen);
            }
            return o.who() + String.format(" warm-up: %d rounds in %.1f s on a loopback connection to %s on %s, this process only"
                            + " (until the JIT is idle for %d s, at most %d s); the native peer waited in perftest's"
                            + " exchange%n",
                    rounds, (System.nanoTime() - start) / 1e9, at, device.device().name(),
                    JitActivity.QUIET_NANOS / 1_000_000_000, o.warmupMaxSeconds);
        } catch (IOException | RuntimeException | InterruptedException e) {
            return o.who() + String.format(" warm-up: failed after %.1f s on a loopback connection%s (%s); the run goes on cold,"
                            + " so its latencies include the JIT's work%n", (System.nanoTime() - start) / 1e9,
                    at == null ? "" : " to " + at, e.getMessage());
        }
    }

    /** A free TCP port on {@code address} for the listener (iWARP's rdma_cm listens on a real TCP port). */
    private static int freePort(InetAddress address) throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, address)) {
            return s.getLocalPort();
        }
    }

    /** The listener, both ends, the loop end's link, the other end's memory and the partner. Closed in reverse. */
    private static final class Pair implements AutoCloseable {
        /** The warm-up's own rdma_cm event loop: closed last, which checks that no cm_id of it is left. */
        private CmEventLoop loop;
        private RdmaListener listener;
        private volatile RdmaConnection a;
        private volatile RdmaConnection b;
        private boolean closed;
        /** Set by {@link #close} when the warm-up's loop still had connections or listeners open. */
        private String leftOpen;
        private PerftestLink end;
        /** What the loop end's loops use, once it is aimed at the other end. */
        private PerftestPath path;
        /** The loop end's region registered again in b's PD, so that b's responder writes and reads it. */
        private MemoryRegion alias;
        /** b's own buffer for what it receives and sends. */
        private MemoryRegion bmem;
        private ReceiveRequest brecv;
        private SendRequest bsend;
        private CompletionBatch bbatch;
        private volatile PerftestPartner partner; // stopped from the thread that gives up on the warm-up
        private Thread partnerThread;

        void connect(PerftestOptions o, boolean role, int slot, InetSocketAddress at, int rd, PerftestExchange exchange)
                throws IOException, InterruptedException {
            loop = CmEventLoop.create("rdma-bench warm-up rdma_cm");
            listener = RdmaListener.bind(at, 1, options(o, rd), loop);
            var incoming = listener.acceptAsync(SETUP_TIMEOUT);
            a = get(RdmaConnection.resolveAsync(at, new InetSocketAddress(at.getAddress(), 0), options(o, rd),
                    SETUP_TIMEOUT, loop), "resolving the loopback address");
            end = PerftestLink.loopbackEnd(o, role, slot, a, exchange, o.rdmaCm);
            var connected = a.connectAsync(new byte[0], SETUP_TIMEOUT);
            b = get(incoming, "the loopback connect request");
            if (b == null) {
                throw new RdmaException("no loopback connect request within " + SETUP_TIMEOUT.toSeconds() + " s");
            }
            alias = b.protectionDomain().register(end.mem(), PerftestDevice.remoteAccess(b.context()));
            bmem = b.protectionDomain().allocate(slot);
            QueuePair bq = b.queuePair();
            brecv = bq.newReceiveRequest(1, 1);
            brecv.wrId(PerftestLink.RECV_ID).sge(bmem, 0, slot);
            bsend = bq.newSendRequest(1, 1);
            bsend.opcode(0, Opcode.SEND).signaled(0, true).sge(bmem, 0, o.maxSize());
            bbatch = new CompletionBatch(16);
            for (int i = 0; i < o.rxDepth(); i++) {
                bq.postRecv(brecv); // before a can send
            }
            b.accept(new byte[0], SETUP_TIMEOUT);
            get(connected, "the loopback connection");
            end.aimAt(alias.rkey());
            path = end.path();
        }

        private static ConnectionOptions options(PerftestOptions o, int rd) {
            // One QP carries the -q requests of the loop end (PerftestLink#loopbackEnd): deep enough for all their windows.
            return new ConnectionOptions(o.txDepth * o.numQps + 2, o.rxDepth(), 1, 1, o.inline(),
                    o.txDepth * o.numQps + o.rxDepth() + 16, rd, 7, 7, false);
        }

        private static <T> T get(java.util.concurrent.CompletableFuture<T> f, String what)
                throws RdmaException, InterruptedException {
            try {
                return f.get(SETUP_TIMEOUT.toNanos() + Duration.ofSeconds(1).toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                throw new RdmaException(what + " failed: " + e.getCause().getMessage(), e.getCause());
            } catch (TimeoutException e) {
                throw new RdmaException(what + " timed out");
            }
        }

        /** The rounds; returns how many ran. */
        int run(PerftestOptions o, PerftestPartner.Mode mode, long start) throws IOException {
            if (mode != PerftestPartner.Mode.NONE) {
                partner = new PerftestPartner(o, mode, b, bsend, brecv, bbatch, path);
                partnerThread = Thread.ofPlatform().daemon().name("rdma-bench warm-up partner").start(partner);
            }
            // Never with -D (PerftestOptions.warmup): rounds of a fixed count each wait for their last completion,
            // so no completion of one round can reach the next round's counters.
            PerftestRound round = new PerftestRound(path, o.iters * o.numQps);
            round.warming(true); // rows only the warm-up would see: not computed
            boolean awaitSink = o.test.bw && path.nativeCredits();
            PerftestRound.Pace pace = size -> {
                // A byte left from the last round must not look like this one's first write (write_lat).
                path.mem().asSlice(path.slot(), path.slot()).fill((byte) 0);
                if (awaitSink) {
                    partner.awaitSink(round.completions().totalSent(), SETUP_TIMEOUT);
                }
            };
            PrintStream none = new PrintStream(OutputStream.nullOutputStream());
            int[] sizes = o.sizes();
            long max = Duration.ofSeconds(o.warmupMaxSeconds).toNanos();
            JitActivity.Watch jit = new JitActivity.Watch(start);
            int rounds = 0;
            boolean more;
            do {
                round.run(sizes, pace, none);
                rounds++;
                long now = System.nanoTime();
                boolean busy = jit.busy(now);
                if (partner != null) {
                    partner.throwIfFailed();
                }
                more = busy && now - start < max;
            } while (more);
            return rounds;
        }

        /** From another thread, past the warm-up's limit: disconnects both ends, which flushes their work requests. */
        void abort() {
            stopPartner();
            for (RdmaConnection c : new RdmaConnection[] {a, b}) {
                if (c != null) {
                    try {
                        c.disconnect();
                    } catch (RdmaException | RuntimeException e) {
                        // the warm-up is given up on either way
                    }
                }
            }
        }

        private void stopPartner() {
            if (partner != null) {
                partner.stop();
            }
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            stopPartner();
            if (partnerThread != null) {
                try {
                    partnerThread.join(Duration.ofSeconds(5));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (partnerThread == null || !partnerThread.isAlive()) {
                // b's region aliases the loop end's memory: b goes first. Its requests only after its poller ended.
                for (AutoCloseable c : new AutoCloseable[] {bsend, brecv, bbatch, alias, bmem, b}) {
                    closeQuietly(c);
                }
            }
            if (end != null) {
                end.closeLoopbackEnd();
            }
            closeQuietly(a);
            closeQuietly(listener);
            if (loop != null) {
                try {
                    loop.close(); // refused while a cm_id of the warm-up is still open: a leak, reported
                } catch (IllegalStateException e) {
                    leftOpen = "its teardown left something open: " + e.getMessage();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private static void closeQuietly(AutoCloseable c) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    // the warm-up is over; the run does not depend on its teardown
                }
            }
        }
    }
}
