package org.rdmapanama.bench.rcpingpong;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.UsageException;

import org.rdmapanama.device.Gid;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionChannel;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QpAddress;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * {@code rdma-bench rc_pingpong}: wire-compatible with libibverbs'
 * {@code ibv_rc_pingpong}. The QP addresses travel over TCP in its 52-byte
 * text format; then the two sides bounce {@code -s} bytes {@code -n} times
 * with Send/Recv on an RC QP. Either side may be the native tool.
 */
public final class RcPingpongCommand {
    private RcPingpongCommand() {}

    private static final long RECV_WRID = 1;
    private static final long SEND_WRID = 2;
    /** A peer that stops answering ends the run instead of hanging it. */
    private static final Duration STALL = Duration.ofSeconds(30);

    static final class Options {
        @Option(names = {"-p", "--port"}, converter = CliArgs.Port.class)
        int port = 18515;
        @Option(names = {"-d", "--ib-dev"})
        String device;
        @Option(names = {"-i", "--ib-port"}, converter = CliArgs.IbPort.class)
        int ibPort = 1;
        @Option(names = {"-s", "--size"}, converter = Size.class)
        int size = 4096;
        @Option(names = {"-m", "--mtu"}, converter = Mtu.class)
        int mtu = 1024;
        @Option(names = {"-r", "--rx-depth"}, converter = RxDepth.class)
        int rxDepth = 500;
        @Option(names = {"-n", "--iters"}, converter = Iters.class)
        int iters = 1000;
        @Option(names = {"-l", "--sl"}, converter = ServiceLevel.class)
        int sl = 0;
        @Option(names = {"-e", "--events"})
        boolean events;
        @Option(names = {"-g", "--gid-idx"}, converter = CliArgs.GidIndex.class)
        Integer gidIndex;
        @Option(names = {"-c", "--chk"})
        boolean validate;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
        @Parameters
        List<String> rest = new ArrayList<>();
        String server;
    }

    // ibv_rc_pingpong's limits, as picocli converters (strtol-like numbers, see CliArgs.Range).
    static final class Size extends CliArgs.Range {
        Size() {
            super(1, Integer.MAX_VALUE);
        }
    }

    static final class Iters extends CliArgs.Range {
        Iters() {
            super(1, Integer.MAX_VALUE);
        }
    }

    static final class RxDepth extends CliArgs.Range {
        RxDepth() {
            super(2, 1 << 20);
        }
    }

    static final class ServiceLevel extends CliArgs.Range {
        ServiceLevel() {
            super(0, 15);
        }
    }

    static final class Mtu extends CliArgs.Range {
        Mtu() {
            super(256, 4096);
        }

        @Override
        public Integer convert(String v) {
            int mtu = super.convert(v);
            if (Integer.bitCount(mtu) != 1) {
                throw new TypeConversionException("MTU must be 256, 512, 1024, 2048 or 4096, got " + mtu);
            }
            return mtu;
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("rc_pingpong", args, out, err, RcPingpongCommand::parse, RcPingpongCommand::usage,
                o -> pingpong(o, out, err));
    }

    /** The options, or null for {@code -h}; throws IllegalArgumentException with a one-line reason. */
    static Options parse(String[] args) {
        Options o = new Options();
        if (!CliArgs.parse(o, args)) {
            return null;
        }
        if (o.rest.size() > 1) {
            throw new IllegalArgumentException("one server name at most, got " + o.rest);
        }
        o.server = o.rest.isEmpty() ? null : o.rest.getFirst();
        return o;
    }

    static void usage(PrintStream s) {
        s.println("usage: rdma-bench rc_pingpong [options] [servername]   (ibv_rc_pingpong-compatible)");
        s.println("  -p, --port=<port>      TCP port for the address exchange (default 18515)");
        s.println("  -d, --ib-dev=<dev>     device (default: from rdma.device/RDMA_DEVICE, else the first active)");
        s.println("  -i, --ib-port=<port>   device port (default 1)");
        s.println("  -s, --size=<size>      bytes per message (default 4096)");
        s.println("  -m, --mtu=<size>       path MTU (default 1024)");
        s.println("  -r, --rx-depth=<dep>   receives kept posted (default 500)");
        s.println("  -n, --iters=<iters>    number of exchanges (default 1000)");
        s.println("  -l, --sl=<sl>          service level (default 0)");
        s.println("  -e, --events           wait on a completion channel instead of polling");
        s.println("  -g, --gid-idx=<idx>    local GID index (default: RoCEv2 GID by type on RoCE, none on IB)");
        s.println("  -c, --chk              validate the received buffer");
    }

    private static int pingpong(Options o, PrintStream out, PrintStream err)
            throws RdmaException, IOException, InterruptedException {
        RdmaConfig config = RdmaConfig.load().withDevice(o.device).withPort(o.ibPort);
        if (o.gidIndex != null) {
            config = config.withGid(Integer.toString(o.gidIndex));
        }
        try (DeviceContext ctx = DeviceContext.open(config)) {
            if (ctx.transport().connectsOnlyThroughRdmaCm()) {
                throw new UsageException(ctx.device().name() + " is " + ctx.transport().displayName() + ", which connects only through "
                        + "rdma_cm; rc_pingpong's out-of-band setup needs InfiniBand or RoCE (try rping)");
            }
            Port port = ctx.selection().port();
            int gidIndex = ctx.selection().gidIndex();
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            MemoryRegion mr = pd.allocate(o.size);
            CompletionChannel channel = o.events ? ctx.createCompletionChannel() : null;
            CompletionQueue cq = ctx.createCompletionQueue(o.rxDepth + 1, channel);
            QueuePair qp = pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(1, o.rxDepth));
            qp.toInit(o.ibPort);
            try (ReceiveRequest recv = qp.newReceiveRequest(1, 1);
                 SendRequest send = qp.newSendRequest(1, 1);
                 CompletionBatch batch = cq.newBatch(2)) {
                recv.wrId(RECV_WRID).sge(mr, 0, o.size);
                send.wrId(SEND_WRID).sge(mr, 0, o.size);
                if (o.size <= qp.maxInlineData()) {
                    send.inline(0, true);
                }
                int routs = postReceives(qp, recv, o.rxDepth);
                if (channel != null) {
                    cq.requestNotification(false);
                }
                byte[] gid = new byte[16];
                if (gidIndex >= 0) {
                    Gid g = ctx.selection().gid();
                    gid = g.raw();
                }
                if (port.lid() == 0 && port.linkLayer() != org.rdmapanama.device.LinkLayer.ETHERNET) {
                    throw new RdmaException("couldn't get the local LID of " + ctx.device().name() + " port " + o.ibPort);
                }
                QpAddress mine = new QpAddress(port.lid(), qp.qpNumber(), new SecureRandom().nextInt(1 << 24), gid);
                out.println("  local address:  " + text(mine));
                QpAddress remote;
                Duration timeout = Duration.ofSeconds(60);
                if (o.server != null) {
                    remote = OutOfBand.client(new InetSocketAddress(InetAddress.getByName(o.server), o.port), mine, timeout);
                    connect(qp, remote, o, gidIndex, mine.psn());
                } else {
                    try (ServerSocket listener = new ServerSocket(o.port)) {
                        remote = OutOfBand.server(listener, mine, r -> connect(qp, r, o, gidIndex, mine.psn()), timeout);
                    }
                }
                out.println("  remote address: " + text(remote));

                long pending = RECV_WRID;
                if (o.server != null) {
                    if (o.validate) {
                        for (long i = 0; i < o.size; i += 4096) {
                            mr.segment().set(JAVA_BYTE, i, (byte) 0); // ibv_rc_pingpong's pattern: i / page % sizeof(char)
                        }
                    }
                    qp.postSend(send);
                    pending |= SEND_WRID;
                }
                long start = System.nanoTime();
                long lastProgress = start;
                int rcnt = 0, scnt = 0;
                while (rcnt < o.iters || scnt < o.iters) {
                    int n;
                    if (channel != null) {
                        if (channel.await(STALL) == null) {
                            throw new RdmaException("no completion event for " + STALL.toSeconds() + " s: is the peer still running?");
                        }
                        cq.requestNotification(false);
                        n = cq.poll(batch);
                    } else {
                        n = cq.poll(batch);
                        if (n == 0) {
                            if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                                throw new RdmaException("no completion for " + STALL.toSeconds() + " s: is the peer still running?");
                            }
                            continue;
                        }
                    }
                    lastProgress = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        if (!batch.isSuccess(i)) {
                            throw new RdmaException("Failed status " + batch.status(i).text() + " (" + batch.status(i).ordinal()
                                    + ") for wr_id " + batch.wrId(i));
                        }
                        long id = batch.wrId(i);
                        if (id == SEND_WRID) {
                            scnt++;
                        } else if (id == RECV_WRID) {
                            if (--routs <= 1) {
                                routs += postReceives(qp, recv, o.rxDepth - routs);
                            }
                            rcnt++;
                        } else {
                            throw new RdmaException("completion for unknown wr_id " + id);
                        }
                        pending &= ~id;
                        if (scnt < o.iters && pending == 0) {
                            qp.postSend(send);
                            pending = RECV_WRID | SEND_WRID;
                        }
                    }
                }
                double usec = (System.nanoTime() - start) / 1000.0;
                long bytes = (long) o.size * o.iters * 2;
                out.printf("%d bytes in %.2f seconds = %.2f Mbit/sec%n", bytes, usec / 1_000_000, bytes * 8.0 / usec);
                out.printf("%d iters in %.2f seconds = %.2f usec/iter%n", o.iters, usec / 1_000_000, usec / o.iters);
                if (o.server == null && o.validate) {
                    for (long i = 0; i < o.size; i += 4096) {
                        if (mr.segment().get(JAVA_BYTE, i) != 0) {
                            out.println("invalid data in page " + i / 4096);
                        }
                    }
                }
            }
        }
        return CliArgs.OK;
    }

    private static int postReceives(QueuePair qp, ReceiveRequest recv, int n) throws RdmaException {
        for (int i = 0; i < n; i++) {
            qp.postRecv(recv);
        }
        return n;
    }

    private static void connect(QueuePair qp, QpAddress remote, Options o, int gidIndex, int myPsn) throws RdmaException {
        // Like ibv_rc_pingpong: a GRH only when the peer sent a GID.
        qp.toRtr(remote, o.ibPort, remote.hasGid() ? gidIndex : -1, o.mtu);
        qp.toRts(myPsn);
    }

    private static String text(QpAddress a) {
        return String.format("LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", a.lid(), a.qpn(), a.psn(),
                new Gid(0, a.gid(), GidType.UNKNOWN, 0).text());
    }
}
