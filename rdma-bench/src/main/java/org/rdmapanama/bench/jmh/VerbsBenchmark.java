package org.rdmapanama.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rdmapanama.device.Gid;
import org.rdmapanama.device.GidType;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.ConfinedPoller;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QpAddress;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The binding's own cost on a real device (rxe0 in the lab), next to the
 * same calls in C ({@code src/main/c/verbs_bench.c}): an empty
 * {@code ibv_poll_cq} (pure userspace on rxe: it isolates the FFM call),
 * {@code ibv_post_recv}, and an RDMA Write posted and polled to completion on
 * a loopback RC QP. Run with {@code -prof gc}: each must allocate 0 B/op.
 * <p>
 * Each comes twice: through the resource itself (the shared path, one
 * atomic arena acquire and release per call) and, suffixed {@code Confined},
 * through a {@link ConfinedPoller} or {@link ConfinedPoster} bound to the
 * benchmark thread. Those are made and closed per iteration, on the thread
 * that runs it.
 * <p>
 * {@link #nativeCall} is the floor under all of them: one FFM downcall of a C
 * function that does nothing ({@code memchr} of 0 bytes), shaped like the
 * data path's (a {@code critical} handle, the function pointer passed in, then
 * {@code long, int, long}), against the C loop calling it through a function
 * pointer, as {@code ibv_poll_cq} does.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class VerbsBenchmark {
    /** Receives posted per {@link #postRecv} invocation; the RQ is emptied between invocations. */
    static final int RECV_BATCH = 256;

    @Param("rxe0")
    public String device;

    DeviceContext ctx;
    CompletionQueue emptyCq;
    CompletionQueue cq;
    CompletionBatch emptyBatch;
    CompletionBatch batch;
    QueuePair a;
    SendRequest write;

    @Setup(Level.Trial)
    public void open() throws RdmaException {
        ctx = DeviceContext.open(device);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        emptyCq = ctx.createCompletionQueue(16);
        cq = ctx.createCompletionQueue(16);
        emptyBatch = emptyCq.newBatch(1);
        batch = cq.newBatch(1);
        a = pd.createQueuePair(QueuePairConfig.rc(cq));
        QueuePair b = pd.createQueuePair(QueuePairConfig.rc(cq));
        Gid gid = ctx.device().port(1).gids().stream()
                .filter(g -> g.type() == GidType.ROCE_V2 && g.isIpv4()).findFirst()
                .orElseThrow(() -> new IllegalStateException(device + " has no RoCEv2 IPv4 GID"));
        a.toInit(1, Access.REMOTE_WRITE);
        b.toInit(1, Access.REMOTE_WRITE);
        a.toRtr(new QpAddress(0, b.qpNumber(), 0, gid.raw()), 1, gid.index(), 1024);
        b.toRtr(new QpAddress(0, a.qpNumber(), 0, gid.raw()), 1, gid.index(), 1024);
        a.toRts(0);
        b.toRts(0);
        MemoryRegion src = pd.allocate(4096);
        MemoryRegion dst = pd.allocate(4096, Access.REMOTE_WRITE);
        write = a.newSendRequest(1, 1).wrId(1).opcode(0, Opcode.RDMA_WRITE).sge(src, 0, 64)
                .remote(dst.address(), dst.rkey());
    }

    private static final MethodHandle CALL = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG), Linker.Option.critical(false));
    private static final MemorySegment MEMCHR_CONSTANT = Linker.nativeLinker().defaultLookup().findOrThrow("memchr");
    private static final MethodHandle CALL_BOUND = CALL.bindTo(MEMCHR_CONSTANT);
    /** Not a constant to the JIT, as a provider's function pointer read from a context is not. */
    MemorySegment memchr = MEMCHR_CONSTANT;
    long someAddress = 4096;

    /** The FFM downcall alone, shaped like {@code DataPath}'s: {@code memchr(p, 0, 0)}, which returns at once. */
    @Benchmark
    public long nativeCall() throws Throwable {
        return (long) CALL.invokeExact(memchr, someAddress, 0, 0L);
    }

    /** {@link #nativeCall} with the function's address a constant the JIT sees (a static final bound handle). */
    @Benchmark
    public long nativeCallBound() throws Throwable {
        return (long) CALL_BOUND.invokeExact(someAddress, 0, 0L);
    }

    @TearDown(Level.Trial)
    public void close() throws RdmaException {
        ctx.close();
    }

    /**
     * The confined pollers and poster, bound to the thread that runs the iteration. JMH injects
     * a VerbsBenchmark of its own here, not the benchmark method's receiver, so the batches and
     * the work request come from that instance too (a poller takes only its own CQ's batches).
     */
    @State(Scope.Thread)
    public static class Confined {
        ConfinedPoller emptyPoller;
        ConfinedPoller poller;
        ConfinedPoster poster;
        CompletionBatch emptyBatch;
        CompletionBatch batch;
        SendRequest write;

        @Setup(Level.Iteration)
        public void open(VerbsBenchmark b) {
            emptyPoller = b.emptyCq.confinedPoller();
            poller = b.cq.confinedPoller();
            poster = b.a.confinedPoster();
            emptyBatch = b.emptyBatch;
            batch = b.batch;
            write = b.write;
        }

        @TearDown(Level.Iteration)
        public void close() {
            poster.close();
            poller.close();
            emptyPoller.close();
        }
    }

    /** {@code ibv_poll_cq} on a CQ that never has completions. */
    @Benchmark
    public int pollEmptyCq() throws RdmaException {
        return emptyCq.poll(emptyBatch);
    }

    /** {@link #pollEmptyCq} through a {@link ConfinedPoller}. */
    @Benchmark
    public int pollEmptyCqConfined(Confined c) throws RdmaException {
        return c.emptyPoller.poll(c.emptyBatch);
    }

    /** {@link #postSendPoll} through a {@link ConfinedPoster} and {@link ConfinedPoller}. */
    @Benchmark
    public int postSendPollConfined(Confined c) throws RdmaException {
        c.poster.postSend(c.write);
        int n;
        while ((n = c.poller.poll(c.batch)) == 0) {
            // Spins bare, as the C twin does: a PAUSE (Thread.onSpinWait) is costly under TCG.
        }
        return n;
    }

    /** {@code ibv_post_send} of a 64-byte signaled RDMA Write, then {@code ibv_poll_cq} until it completes. */
    @Benchmark
    public int postSendPoll() throws RdmaException {
        a.postSend(write);
        int n;
        while ((n = cq.poll(batch)) == 0) {
            // As above: no PAUSE, as in C.
        }
        return n;
    }

    /** A QP in INIT whose receive queue is reset between invocations (outside the timing). */
    @State(Scope.Thread)
    public static class ReceiveQueue {
        QueuePair qp;
        ReceiveRequest recv;

        @Setup(Level.Trial)
        public void open(VerbsBenchmark b) throws RdmaException {
            ProtectionDomain pd = b.ctx.allocateProtectionDomain();
            CompletionQueue rcq = b.ctx.createCompletionQueue(RECV_BATCH + 1);
            qp = pd.createQueuePair(QueuePairConfig.rc(rcq).withQueueDepth(1, RECV_BATCH));
            MemoryRegion mr = pd.allocate(4096);
            recv = qp.newReceiveRequest(1, 1).wrId(7).sge(mr, 0, 64);
            qp.toInit(1);
        }

        ConfinedPoster poster;

        @Setup(Level.Invocation)
        public void empty() throws RdmaException {
            qp.toReset(); // RESET drops posted receives without completions
            qp.toInit(1);
        }

        @Setup(Level.Iteration)
        public void bind() {
            poster = qp.confinedPoster();
        }

        @TearDown(Level.Iteration)
        public void unbind() {
            poster.close();
        }

    }

    /** {@code ibv_post_recv} of one single-SGE receive. */
    @Benchmark
    @OperationsPerInvocation(RECV_BATCH)
    public void postRecv(ReceiveQueue rq) throws RdmaException {
        for (int i = 0; i < RECV_BATCH; i++) {
            rq.qp.postRecv(rq.recv);
        }
    }

    /** {@link #postRecv} through a {@link ConfinedPoster}. */
    @Benchmark
    @OperationsPerInvocation(RECV_BATCH)
    public void postRecvConfined(ReceiveQueue rq) throws RdmaException {
        for (int i = 0; i < RECV_BATCH; i++) {
            rq.poster.postRecv(rq.recv);
        }
    }
}
