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
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.error.RdmaException;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;

/**
 * The message channel's cost per 64-byte message, with both ends in this JVM:
 * a server and a client {@link ChannelGroup} on the device that {@link #transport}
 * selects, one channel between them. Run with {@code -prof gc}: in steady state
 * each must allocate 0 B/op (JMH counts every thread of the JVM, so the loop
 * threads' allocation is in the figure as well as the benchmark thread's).
 * <ul>
 *   <li>{@link #pingPong}: the benchmark thread allocates and sends a message, the
 *   server's handler echoes it, the benchmark thread takes the reply and releases it.</li>
 *   <li>{@link #oneWay}: the benchmark thread sends, the server's handler releases
 *   each message, and credits flow back; at most {@link #AHEAD} messages are ahead
 *   of the server, so some wait in the channel's send queue for credits.</li>
 * </ul>
 * The benchmark thread is a user's thread: its sends and releases reach the loop
 * threads through their hand-over queues. It waits with {@link Thread#yield()}:
 * in the lab the JVM is pinned to one vCPU, which the loop threads share with it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 3, time = 2)
// C2 after a tenth of the calls: under the lab's emulation a message costs milliseconds, and the default
// thresholds (tier 4 at 5,000 to 15,000 calls) would leave the data path in C1's code, which does not
// remove allocations by escape analysis, for the whole run.
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-XX:CompileThresholdScaling=0.1"})
public class ChannelBenchmark {
    static final int SIZE = 64;
    /** Messages sent per {@link #oneWay} invocation: one window of the default options. */
    static final int BATCH = 32;
    /** Messages the one-way stream keeps ahead of the server: past the window, some wait for credits. */
    static final int AHEAD = 2 * BATCH;
    static final int PORT = 7478;
    static final int ECHO = 1;
    static final int SINK = 2;

    /** The transport the groups select (any value {@code rdma.transport} takes); other RDMA_* settings apply too. */
    @Param("rocev2")
    public String transport;

    /**
     * How long an idle loop polls before it sleeps. 0 by default: in the lab the benchmark thread
     * and both loops share one vCPU, where a polling loop holds it from the other two for a
     * scheduler slice.
     */
    @Param("0")
    public long busyPollNanos;

    ChannelGroup serverGroup;
    ChannelGroup clientGroup;
    ChannelServer server;
    MessageChannel channel;
    /** The reply the client's handler took, for the benchmark thread to release. */
    volatile Message reply;
    /** One-way messages the server released; its loop thread is the only writer. */
    volatile long sunk;
    long sent;
    int seq;
    ThreadBytes ledger;

    @Setup(Level.Trial)
    public void open() throws Exception {
        ChannelOptions options = ChannelOptions.defaults().withBusyPollNanos(busyPollNanos);
        RdmaConfig config = RdmaConfig.load().withTransport(transport);
        serverGroup = ChannelGroup.open(config, options);
        server = serverGroup.listen(PORT, this::serve);
        clientGroup = ChannelGroup.open(config, options);
        channel = clientGroup.connect(new InetSocketAddress(serverGroup.address(), PORT), (ch, m) -> reply = m)
                .get(30, TimeUnit.SECONDS);
        System.out.println("ChannelBenchmark: " + transport + " selected "
                + serverGroup.selection().device().name() + " (" + serverGroup.selection().transport().displayName()
                + "), busyPollNanos " + busyPollNanos);
        ledger = new ThreadBytes(serverGroup + "-", clientGroup + "-");
    }

    @Setup(Level.Iteration)
    public void countFrom() {
        ledger.begin(seq + sent);
    }

    /** The server's handler, on its loop thread: echoes {@link #ECHO}, counts {@link #SINK}. */
    private void serve(MessageChannel ch, Message m) throws RdmaException {
        MemorySegment in = m.segment();
        int length = m.length();
        if (in.get(JAVA_INT_UNALIGNED, 0) == ECHO) {
            MessageBuffer out = ch.allocate(length);
            MemorySegment.copy(in, 0, out.segment(), 0, length);
            m.release();
            ch.send(out, length);
        } else {
            m.release();
            sunk = sunk + 1;
        }
    }

    /** A 64-byte round trip: allocate, send, the server's echo, the reply's release. */
    @Benchmark
    public int pingPong() throws RdmaException {
        MessageBuffer b = channel.allocate(SIZE);
        MemorySegment s = b.segment();
        s.set(JAVA_INT_UNALIGNED, 0, ECHO);
        s.set(JAVA_INT_UNALIGNED, 4, ++seq);
        channel.send(b, SIZE);
        Message m;
        while ((m = reply) == null) {
            Thread.yield();
        }
        reply = null;
        int got = m.segment().get(JAVA_INT_UNALIGNED, 4);
        m.release();
        if (got != seq) {
            throw new IllegalStateException("reply " + got + " to message " + seq);
        }
        return got;
    }

    /** One 64-byte message one way, released by the server, its credit back. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void oneWay() throws RdmaException {
        for (int i = 0; i < BATCH; i++) {
            while (sent - sunk >= AHEAD) {
                Thread.yield();
            }
            MessageBuffer b = channel.allocate(SIZE);
            b.segment().set(JAVA_INT_UNALIGNED, 0, SINK);
            channel.send(b, SIZE);
            sent++;
        }
    }

    /** Waits for what is in flight, so that an iteration hands the next one an idle channel. */
    @TearDown(Level.Iteration)
    public void drain() {
        while (sunk < sent) {
            Thread.yield();
        }
        ledger.end(seq + sent);
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        ledger.print(System.out);
        try {
            channel.close();
            channel.closeFuture().get(30, TimeUnit.SECONDS);
            server.close();
        } finally {
            try {
                clientGroup.close();
            } finally {
                serverGroup.close();
            }
        }
    }
}
