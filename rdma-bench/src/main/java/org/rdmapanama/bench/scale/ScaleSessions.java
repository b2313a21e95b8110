package org.rdmapanama.bench.scale;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.JitActivity;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.RemoteBuffer;
import org.rdmapanama.verbs.SendRequest;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code rdma-bench scale server|client}: batches of N rdma_cm connections
 * between two processes, each set up, used for one RDMA Write and one Send,
 * and torn down, as {@code ucmatose -c N -C 1} does. Set-up is asynchronous
 * (the {@code ...Async} API on the shared event loop), all N at once unless a
 * window is given: no thread waits per connection.
 * <p>
 * The first batch is the cold figure: the client reports it from the
 * process's exec (JVM start included), as a native client is timed from exec
 * to exit. Later batches in the same JVM are the warm figure.
 */
final class ScaleSessions {
    private ScaleSessions() {}

    /** The client tags each connection's data with its number: a mix-up between QPs shows at the server. */
    private static final long TAG = ScaleCommand.TAG;
    private static final Duration T = ScaleCommand.T;

    static int server(InetSocketAddress at, int count, int batches, PrintStream out) throws Exception {
        try (RdmaListener listener = RdmaListener.bind(at, Math.min(count, 1024), ScaleCommand.OPTIONS);
             CompletionBatch batch = new CompletionBatch(1)) {
            out.println("scale server: listening on " + at + " for " + batches + " batch(es) of " + count + " connections");
            for (int b = 1; b <= batches; b++) {
                Cpu cpu = Cpu.now();
                serveBatch(listener, count, batch);
                out.println("scale server: batch " + b + " of " + batches + ": " + count
                        + " connections, data verified on each, all disconnected; " + cpu.since());
            }
            return CliArgs.OK;
        }
    }

    private static void serveBatch(RdmaListener listener, int count, CompletionBatch batch) throws Exception {
        RdmaConnection[] conns = new RdmaConnection[count];
        MemoryRegion[] mrs = new MemoryRegion[count];
        List<CompletableFuture<Object>> accepted = new ArrayList<>(count);
        try {
            // Each request is taken, given its memory and receive, and accepted where its
            // event arrived, on the event loop's thread (a request already waiting is taken
            // here), as ucmatose does in its event handler: no hand-off to this thread
            // and back per connection.
            for (int i = 0; i < count; i++) {
                accepted.add(acceptOne(listener, i, conns, mrs));
            }
            long firstWait = ACCEPT_WAIT.toSeconds() + T.toSeconds() + 5; // the client may start late
            for (CompletableFuture<Object> f : accepted) {
                f.get(firstWait, TimeUnit.SECONDS);
                firstWait = T.toSeconds() + 5;
            }
            BitSet seen = new BitSet(count);
            for (int i = 0; i < count; i++) {
                if (conns[i].completionQueue().pollUntil(batch, T) != 1) {
                    throw new RdmaException("no Send on connection " + i);
                }
                batch.requireSuccess(0);
                long sent = mrs[i].segment().get(JAVA_LONG, 64), written = mrs[i].segment().get(JAVA_LONG, 0);
                if (sent != written || (sent & ~0xffffffffL) != TAG || batch.wrId(0) != i) {
                    throw new RdmaException("connection " + i + ": wrote 0x" + Long.toHexString(written) + ", sent 0x"
                            + Long.toHexString(sent) + ", completion for receive " + batch.wrId(0));
                }
                int from = (int) (sent - TAG);
                if (from >= count || seen.get(from)) {
                    throw new RdmaException("connection " + i + " carries the client's number " + from
                            + " twice or out of 0.." + (count - 1));
                }
                seen.set(from);
            }
            for (RdmaConnection c : conns) {
                if (!c.awaitDisconnect(T)) {
                    throw new RdmaException("no disconnect from " + c);
                }
            }
        } finally {
            for (CompletableFuture<Object> f : accepted) {
                f.cancel(false); // a connection accepted after this is closed by its own callback
            }
            closeAll(conns);
        }
    }

    private static final Duration ACCEPT_WAIT = Duration.ofMinutes(5);

    /** Takes request {@code i}, registers its memory, posts its receive and accepts it, where its request arrived. */
    private static CompletableFuture<Object> acceptOne(RdmaListener listener, int i, RdmaConnection[] conns,
                                                       MemoryRegion[] mrs) {
        CompletableFuture<Object> done = new CompletableFuture<>();
        listener.acceptAsync(ACCEPT_WAIT).thenCompose(c -> {
            if (c == null) {
                return CompletableFuture.failedFuture(new RdmaException("no connection " + i + " within 5 minutes"));
            }
            conns[i] = c;
            if (done.isDone()) { // the batch failed meanwhile
                return CompletableFuture.failedFuture(new java.util.concurrent.CancellationException());
            }
            try {
                MemoryRegion mr = c.protectionDomain().allocate(128, Access.REMOTE_WRITE);
                mrs[i] = mr;
                try (ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1)) {
                    c.queuePair().postRecv(recv.wrId(i).sge(mr, 64, 8));
                }
                return c.acceptAsync(mr.remote().toBytes(), T);
            } catch (RdmaException | RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }).whenComplete((c, e) -> {
            boolean kept = e == null ? done.complete(c)
                    : done.completeExceptionally(new RdmaException("connection " + i + ": " + RdmaException.unwrap(e).getMessage(), e));
            if (!kept && conns[i] != null) { // the batch gave up before this one was stored: nobody else closes it
                closeAll(new RdmaConnection[] {conns[i]});
            }
        });
        return done;
    }


    /** Times of one client batch, in nanoseconds of {@link System#nanoTime()}. */
    record Batch(long start, long connected, long data, long closed, long[] resolve, long[] connect) {}

    static int client(InetSocketAddress at, int count, int window, int batches, PrintStream out) throws Exception {

        try (CompletionBatch cb = new CompletionBatch(1)) {
            for (int b = 1; b <= batches; b++) {
                Cpu cpu = Cpu.now();
                Batch t = clientBatch(at, count, window, cb);
                String used = cpu.since();
                double secs = (t.closed() - t.start()) / 1e9;
                String which = b == 1 ? "cold" : "warm";
                out.printf("scale client: batch %d of %d (%s): %d connections, %s at a time: established in %.3f s, "
                                + "one Write + one Send each in %.3f s, closed in %.3f s; session %.3f s, %.1f connections/s%n",
                        b, batches, which, count, window >= count ? "all" : Integer.toString(window),
                        (t.connected() - t.start()) / 1e9, (t.data() - t.connected()) / 1e9,
                        (t.closed() - t.data()) / 1e9, secs, count / secs);
                out.printf("scale client: per connection, resolve (address, route, PD, CQ, QP) %s; connect %s; %s%n",
                        ScaleCommand.spread(t.resolve()), ScaleCommand.spread(t.connect()), used);
                double sinceExec = b == 1 ? secondsSinceExec() : -1;
                if (sinceExec > 0) {
                    out.printf("scale client: cold: from the process's exec to the last close of batch 1 %.3f s, "
                            + "%.1f connections/s%n", sinceExec, count / sinceExec);
                }
            }
            return CliArgs.OK;
        }
    }

    /**
     * The process's user and system CPU ticks and its JIT compiler threads'
     * ({@code /proc}, USER_HZ = 100): whether a slow batch computed, compiled,
     * sat in the kernel or waited.
     */
    record Cpu(long user, long system, long jit, long switches) {
        static Cpu now() {
            try {
                String[] f = selfStat();
                return new Cpu(Long.parseLong(f[11]), Long.parseLong(f[12]), JitActivity.compilerThreadTicks(),
                        JitActivity.contextSwitches());
            } catch (java.io.IOException | RuntimeException e) {
                return new Cpu(-1, -1, -1, -1);
            }
        }

        String since() {
            Cpu n = now();
            if (user < 0 || n.user < 0) {
                return "CPU time unknown";
            }
            String compiling = jit < 0 || n.jit < 0 ? "" : String.format(" (JIT %.2f s)", (n.jit - jit) / 100.0);
            String switched = switches < 0 || n.switches < 0 ? "" : ", " + (n.switches - switches) + " context switches";
            return String.format("CPU user %.2f s%s, system %.2f s%s", (n.user - user) / 100.0, compiling,
                    (n.system - system) / 100.0, switched);
        }
    }

    /**
     * Seconds since this process was exec'ed (the launcher's exec: JVM
     * start-up included), to 10 ms: the uptime now less the process's start
     * in clock ticks since boot (USER_HZ = 100), both from /proc; -1 if unknown.
     * (ProcessHandle's start instant has whole seconds only.)
     */
    static double secondsSinceExec() {
        try {
            double uptime = Double.parseDouble(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/uptime")).split(" ")[0]);
            long startTicks = Long.parseLong(selfStat()[19]);
            return uptime - startTicks / 100.0;
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    /** /proc/self/stat's fields after the command name: index 0 is field 3 (state), so field N is N - 3. */
    private static String[] selfStat() throws java.io.IOException {
        String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat"));
        return stat.substring(stat.lastIndexOf(')') + 2).split(" "); // the name may hold spaces and parentheses
    }

    /** N connections, {@code window} being set up at a time; one Write and one Send each; all closed. */
    static Batch clientBatch(InetSocketAddress at, int count, int window, CompletionBatch cb) throws Exception {
        RdmaConnection[] conns = new RdmaConnection[count];
        MemoryRegion[] mrs = new MemoryRegion[count];
        CompletableFuture<?>[] opened = new CompletableFuture<?>[count];
        long[] resolve = new long[count], connect = new long[count];
        for (int i = 0; i < count; i++) {
            opened[i] = new CompletableFuture<>();
        }
        long start = System.nanoTime();
        try {
            AtomicInteger next = new AtomicInteger();
            for (int i = 0; i < Math.min(window, count); i++) {
                openNext(at, next, count, conns, mrs, opened, resolve, connect);
            }
            for (CompletableFuture<?> f : opened) {
                f.get(T.toSeconds() + 5, TimeUnit.SECONDS);
            }
            long connected = System.nanoTime();
            // As ucmatose: post on every connection, then reap every completion.
            for (int i = 0; i < count; i++) {
                writeAndSend(conns[i], mrs[i], i);
            }
            for (int i = 0; i < count; i++) {
                await(conns[i], cb, i, "write");
                await(conns[i], cb, i, "send");
            }
            long data = System.nanoTime();
            for (int i = 0; i < count; i++) {
                conns[i].close();
                conns[i] = null;
            }
            return new Batch(start, connected, data, System.nanoTime(), resolve, connect);
        } finally {
            for (CompletableFuture<?> f : opened) {
                f.cancel(false);
            }
            closeAll(conns);
        }
    }

    /** Closes what is open; a failure here must not hide the one that got us here. */
    private static void closeAll(RdmaConnection[] conns) {
        for (RdmaConnection c : conns) {
            if (c != null) {
                try {
                    c.close();
                } catch (RdmaException | RuntimeException e) {
                    System.err.println("rdma-bench scale: closing " + c + ": " + e.getMessage());
                }
            }
        }
    }

    /** Starts connection {@code next++}; its completion starts the one after, so {@code window} stay in flight. */
    private static void openNext(InetSocketAddress at, AtomicInteger next, int count, RdmaConnection[] conns,
                                 MemoryRegion[] mrs, CompletableFuture<?>[] opened, long[] resolve, long[] connect) {
        int i = next.getAndIncrement();
        if (i >= count) {
            return;
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<Object> done = (CompletableFuture<Object>) opened[i];
        long t0 = System.nanoTime();
        RdmaConnection.resolveAsync(at, null, ScaleCommand.OPTIONS, T).thenCompose(c -> {
            if (done.isDone()) { // the batch failed and was cleaned up meanwhile: nobody else closes this one
                closeAll(new RdmaConnection[] {c});
                return CompletableFuture.failedFuture(new java.util.concurrent.CancellationException());
            }
            conns[i] = c;
            resolve[i] = System.nanoTime() - t0;
            try {
                mrs[i] = c.protectionDomain().allocate(64);
            } catch (RdmaException e) {
                return CompletableFuture.failedFuture(e);
            }
            return c.connectAsync(new byte[0], T);
        }).whenComplete((c, e) -> {
            if (e != null) {
                Throwable why = RdmaException.unwrap(e);
                done.completeExceptionally(new RdmaException("connection " + i + ": " + why.getMessage(), why));
            } else {
                connect[i] = System.nanoTime() - t0 - resolve[i];
                if (!done.complete(c)) { // cancelled: the batch failed; open no more
                    closeAll(new RdmaConnection[] {c});
                    return;
                }
                openNext(at, next, count, conns, mrs, opened, resolve, connect);
            }
        });
    }

    /** Posts the Write and then the Send (RC keeps their order: the Write lands before the Send completes). */
    private static void writeAndSend(RdmaConnection c, MemoryRegion mine, int i) throws Exception {
        RemoteBuffer peer = RemoteBuffer.fromBytes(c.peerPrivateData());
        mine.segment().set(JAVA_LONG, 0, TAG + i);
        try (SendRequest wr = c.queuePair().newSendRequest(1, 1)) { // the device copied each request when posted
            c.queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(mine, 0, 8).remote(peer.at(0, 8), peer.rkey()));
            c.queuePair().postSend(wr.opcode(0, Opcode.SEND).sge(mine, 0, 8));
        }
    }

    private static void await(RdmaConnection c, CompletionBatch cb, int i, String what) throws RdmaException {
        if (c.completionQueue().pollUntil(cb, T) != 1) {
            throw new RdmaException("no completion for the " + what + " on connection " + i);
        }
        cb.requireSuccess(0);
    }
}
