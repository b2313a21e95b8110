package org.rdmapanama.bench;

import org.rdmapanama.Access;
import org.rdmapanama.CompletionBatch;
import org.rdmapanama.CompletionQueue;
import org.rdmapanama.DeviceContext;
import org.rdmapanama.MemoryRegion;
import org.rdmapanama.Opcode;
import org.rdmapanama.ProtectionDomain;
import org.rdmapanama.QpAddress;
import org.rdmapanama.QueuePair;
import org.rdmapanama.QueuePairConfig;
import org.rdmapanama.ReceiveRequest;
import org.rdmapanama.SendRequest;
import org.rdmapanama.TransportCapabilityException;
import org.rdmapanama.bench.PerftestOptions.Test;
import org.rdmapanama.bench.PerftestOptions.Verb;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.device.NoSuchDeviceException;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code rdma-bench write_lat | read_lat | send_lat | atomic_lat | write_bw |
 * read_bw | send_bw}: perftest's tests, flags and report format on
 * rdma-panama. Server without an address, client with one.
 * <p>
 * Setup: without {@code -R}, the two ends swap a {@link PerftestWire} message
 * over TCP and move their RC QPs to RTS themselves (InfiniBand and RoCE);
 * with {@code -R}, rdma_cm connects them and the message travels as private
 * data (the only way for iWARP). Each side's memory region is
 * {@code [0,S)} source, {@code [S,2S)} where the peer writes or reads, and a
 * 128-byte control area the peer writes too: the receive credit (send_bw on
 * iWARP, which has no RNR retry), the barrier generation (one barrier before
 * each size and one at the end) and the client's bandwidth report, which
 * write_bw and read_bw servers print as perftest's do.
 * <p>
 * Timed loops reuse pre-built work requests and a pre-allocated timestamp
 * array; they allocate nothing. Every wait has a deadline.
 * One thread owns a run; nothing here is shared.
 */
final class PerftestCommand {
    // wr_id tags; data WRs carry their index (< 2^60) so that a completion tells how many are done.
    private static final long RECV_ID = 1L << 62;
    private static final long CTRL_ID = 1L << 61;
    private static final long CREDIT_ID = 1L << 60;

    private static final int CTRL_SIZE = 128;
    private static final int CTRL_CREDIT = 0, CTRL_BARRIER = 8, CTRL_REPORT = 16, CTRL_VOTE = 56; // written by the peer
    private static final int OUT_CREDIT = 64, OUT_BARRIER = 72, OUT_REPORT = 80, OUT_VOTE = 120;   // our copies to write from
    private static final int REPORT_BYTES = 40;

    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(120);
    /** A data loop that sees no progress this long gives up: the peer is gone. */
    private static final long STALL_NANOS = Duration.ofSeconds(30).toNanos();
    private static final long BARRIER_SPIN_NANOS = Duration.ofMillis(1).toNanos();
    private static final long BARRIER_PARK_NANOS = Duration.ofMillis(1).toNanos();
    private static final long MARGIN_NANOS = Duration.ofSeconds(2).toNanos();
    /** Warm-up rounds go on until the JIT has been idle this long, or for --warmup seconds at most. */
    private static final long JIT_QUIET_NANOS = Duration.ofSeconds(1).toNanos();

    private static final VarHandle BYTE = JAVA_BYTE.varHandle();
    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private PerftestCommand() {}

    static int run(String command, String[] args, PrintStream out, PrintStream err) {
        Test test = Test.of(command);
        String prefix = "rdma-bench " + command + ": ";
        PerftestOptions o;
        try {
            o = PerftestOptions.parse(test, args);
        } catch (IllegalArgumentException e) {
            err.println(prefix + e.getMessage());
            PerftestOptions.usage(test, err);
            return Main.USAGE;
        }
        if (o == null) {
            PerftestOptions.usage(test, out);
            return Main.OK;
        }
        try (PerftestCommand.Run r = new Run(o, out, err)) {
            r.execute();
            return Main.OK;
        } catch (NoSuchDeviceException e) {
            err.println(prefix + e.getMessage());
            return Main.USAGE;
        } catch (IOException | IllegalArgumentException | IllegalStateException | TransportCapabilityException e) {
            err.println(prefix + e.getMessage());
            return Main.FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println(prefix + "interrupted");
            return Main.FAILED;
        }
    }

    /** One run: the resources, the peer's description, and the loops. */
    static final class Run implements AutoCloseable {
        private final PerftestOptions o;
        private PrintStream out; // swapped for a null stream during the warm-up run
        private final PrintStream err;
        private final Test test;
        private final boolean server;
        private final int slot;        // S: the largest message, rounded up to 64
        private final long[] tposted;
        private final long[] tcompleted;

        private DeviceContext ownedContext;
        private RdmaListener listener;
        private RdmaConnection connection;
        private DeviceContext ctx;
        private Selection selection;
        private QueuePair qp;
        private CompletionQueue cq;
        private MemoryRegion mr;
        private MemorySegment mem;
        private SendRequest data;
        private SendRequest ctrl;
        private SendRequest credit;
        private ReceiveRequest recv;
        private CompletionBatch batch;
        private PerftestWire mine;
        private PerftestWire peer;
        private int outReads;
        private int gidIndex;

        // Completion accounting (see poll()).
        private long recvs;
        /** recvs when this size's run began: taken before its barrier, as the peer may send while we wait in it. */
        private long runRecvBase;
        /** When the run's first receive was polled, which may be inside the barrier. */
        private long firstRecvAt;
        private long dataDone;
        private boolean ctrlDone;
        private boolean creditInFlight;
        private boolean recordCompletions;
        private long postedRecvs;
        private long totalRecvs;
        private long totalSent;
        private long lastCredit;
        private long barrierGen;

        // Duration mode: START -> SAMPLE -> STOP -> END by the clock, as perftest's SIGALRM states.
        private long tSample, tStop, tEnd, sampleStart, sampleEnd, sampleBase, sampleCount;
        private int state;

        Run(PerftestOptions o, PrintStream out, PrintStream err) {
            this.o = o;
            this.out = out;
            this.err = err;
            this.test = o.test;
            this.server = o.isServer();
            this.slot = (Math.max(o.maxSize(), 8) + 63) & ~63;
            int n = o.duration == null ? o.iters : 1;
            this.tposted = new long[n];
            this.tcompleted = new long[n];
        }

        void execute() throws IOException, InterruptedException {
            RdmaConfig config = RdmaConfig.load().withTransport(o.transport).withDevice(o.device).withPort(o.ibPort);
            if (o.gidIndex != null) {
                config = config.withGid(Integer.toString(o.gidIndex));
            }
            batch = new CompletionBatch(16);
            if (o.rdmaCm) {
                connectCm(config);
            } else {
                connectOob(config);
            }
            printHeader();
            runAll();
        }

        // --- setup ---

        private void checkDevice(DeviceContext c) {
            if (test.verb == Verb.ATOMIC && c.capabilities().atomicCap() == AtomicCapability.NONE) {
                throw new TransportCapabilityException("atomic_lat refused: " + c.device().name() + " ("
                        + c.transport().displayName() + ") reports atomic_cap NONE");
            }
        }

        private void allocate(ProtectionDomain pd) throws RdmaException {
            List<Access> access = new ArrayList<>(List.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
            if (ctx.capabilities().atomicCap() != AtomicCapability.NONE) {
                access.add(Access.REMOTE_ATOMIC);
            }
            mr = pd.allocate(2L * slot + CTRL_SIZE, access.toArray(Access[]::new));
            mem = mr.segment();
            data = qp.newSendRequest(1, 1);
            ctrl = qp.newSendRequest(1, 1);
            credit = qp.newSendRequest(1, 1);
            ctrl.opcode(0, Opcode.RDMA_WRITE).wrId(CTRL_ID).signaled(0, true);
            credit.opcode(0, Opcode.RDMA_WRITE).wrId(CREDIT_ID).signaled(0, true)
                    .sge(mr, 2L * slot + OUT_CREDIT, 8);
            if (test.verb == Verb.SEND) {
                recv = qp.newReceiveRequest(1, 1);
                recv.wrId(RECV_ID).sge(mr, slot, slot);
                int sizes = o.sizes().length;
                // The warm-up runs as many rounds as the JIT needs: then the count is open-ended, as with -D.
                totalRecvs = o.duration != null || o.warmup() ? Long.MAX_VALUE : (long) o.iters * sizes;
                long first = Math.min(o.rxDepth(), totalRecvs);
                for (long i = 0; i < first; i++) {
                    qp.postRecv(recv);
                }
                postedRecvs = first;
            }
        }

        private PerftestWire describe(int lid, int psn, byte[] gid) {
            return new PerftestWire(test.ordinal(), PerftestWire.flagsOf(o), lid, o.maxSize(),
                    o.duration != null ? o.duration : o.iters, qp.qpNumber(), psn, mr.address() + slot, mr.rkey(),
                    slot + CTRL_SIZE, gid);
        }

        private int psn() {
            return new SecureRandom().nextInt(1 << 24);
        }

        private void connectOob(RdmaConfig config) throws IOException, InterruptedException {
            ownedContext = DeviceContext.open(config);
            ctx = ownedContext;
            selection = ctx.selection();
            if (ctx.transport() == Transport.IWARP) {
                throw new IllegalArgumentException(ctx.device().name() + " is iWARP, which connects only through "
                        + "rdma_cm: add -R");
            }
            checkDevice(ctx);
            Port port = selection.port();
            gidIndex = selection.gidIndex();
            outReads = Math.clamp(Math.min(ctx.capabilities().maxQpRdAtom(), ctx.capabilities().maxQpInitRdAtom()), 1, 16);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            cq = ctx.createCompletionQueue(o.txDepth + o.rxDepth() + 16);
            qp = pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(o.txDepth + 2, o.rxDepth())
                    .withInline(o.inline()).withSignalAll(false));
            List<Access> remote = new ArrayList<>(List.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
            if (ctx.capabilities().atomicCap() != AtomicCapability.NONE) {
                remote.add(Access.REMOTE_ATOMIC);
            }
            qp.toInit(o.ibPort, remote.toArray(Access[]::new));
            allocate(pd);
            byte[] gid = gidIndex >= 0 ? selection.gid().raw() : new byte[16];
            mine = describe(port.lid(), psn(), gid);
            int mtu = port.activeMtu();
            int timeout = (int) SETUP_TIMEOUT.toMillis();
            if (server) {
                try (ServerSocket ss = new ServerSocket()) {
                    ss.setReuseAddress(true);
                    ss.bind(new InetSocketAddress(o.port));
                    ss.setSoTimeout(timeout);
                    waiting();
                    try (Socket s = ss.accept()) {
                        s.setSoTimeout(timeout);
                        peer = PerftestWire.decode(read(s.getInputStream(), PerftestWire.SIZE, "client"), mine,
                                slot + CTRL_SIZE);
                        connectQp(mtu);
                        s.getOutputStream().write(mine.encode());
                        s.getOutputStream().flush();
                        // The client's QP is at RTS once it says so: only then may we write to it.
                        byte[] ready = read(s.getInputStream(), 1, "client");
                        if (ready[0] != 'R') {
                            throw new IllegalArgumentException("client sent 0x" + Integer.toHexString(ready[0] & 0xff)
                                    + " instead of its ready byte");
                        }
                    }
                } catch (SocketTimeoutException e) {
                    throw new RdmaException("no client connected to TCP port " + o.port + " within "
                            + SETUP_TIMEOUT.toSeconds() + " s", e);
                }
            } else {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(InetAddress.getByName(o.server), o.port), timeout);
                    s.setSoTimeout(timeout);
                    s.getOutputStream().write(mine.encode());
                    s.getOutputStream().flush();
                    peer = PerftestWire.decode(read(s.getInputStream(), PerftestWire.SIZE, "server"), mine,
                            slot + CTRL_SIZE);
                    connectQp(mtu);
                    s.getOutputStream().write('R');
                    s.getOutputStream().flush();
                } catch (SocketTimeoutException e) {
                    throw new RdmaException("the setup exchange with " + o.server + ":" + o.port + " timed out after "
                            + SETUP_TIMEOUT.toSeconds() + " s", e);
                } catch (java.net.ConnectException e) {
                    throw new RdmaException("couldn't connect to " + o.server + ":" + o.port + " (" + e.getMessage()
                            + "): is the server running?", e);
                }
            }
        }

        /** perftest's server banner; printed once listening, so a script (or test) may start the client then. */
        private void waiting() {
            out.println();
            out.println("************************************");
            out.println("* Waiting for client to connect... *");
            out.println("************************************");
            out.flush();
        }

        private void connectQp(int mtu) throws RdmaException {
            QpAddress remote = new QpAddress(peer.lid(), peer.qpn(), peer.psn(), peer.gid());
            qp.toRtr(remote, o.ibPort, remote.hasGid() ? gidIndex : -1, mtu);
            qp.toRts(mine.psn());
        }

        private static byte[] read(InputStream in, int n, String who) throws IOException {
            byte[] b = new byte[n];
            int got = in.readNBytes(b, 0, n);
            if (got != n) {
                throw new RdmaException("the " + who + " closed the setup connection after " + got + " of " + n
                        + " bytes (is it rdma-bench with the same subcommand and flags?)");
            }
            return b;
        }

        private void connectCm(RdmaConfig config) throws IOException, InterruptedException {
            List<RdmaDevice> devices = RdmaDevices.require();
            int rd = 255; // rdma_conn_param's fields are 8-bit
            for (RdmaDevice d : devices) {
                rd = Math.min(rd, Math.min(d.capabilities().maxQpRdAtom(), d.capabilities().maxQpInitRdAtom()));
            }
            outReads = Math.max(1, rd);
            ConnectionOptions opts = new ConnectionOptions(o.txDepth + 2, o.rxDepth(), 1, 1, o.inline(),
                    o.txDepth + o.rxDepth() + 16, outReads, 7, 7, false); // perftest's selective signaling
            // A device (or transport) asked for picks the address; otherwise rdma_cm picks by the peer's address.
            boolean pinned = config.device().isPresent() || config.transport().isPresent();
            InetAddress local = pinned ? Selection.select(config, devices).ipAddress() : null;
            if (server) {
                InetSocketAddress at = local != null ? new InetSocketAddress(local, o.port) : new InetSocketAddress(o.port);
                listener = RdmaListener.bind(at, 1, opts);
                waiting();
                connection = listener.accept(SETUP_TIMEOUT);
                if (connection == null) {
                    throw new RdmaException("no client connected through rdma_cm to " + at + " within "
                            + SETUP_TIMEOUT.toSeconds() + " s");
                }
                setUpOnConnection();
                try {
                    peer = PerftestWire.decode(connection.peerPrivateData(), mine, slot + CTRL_SIZE);
                } catch (IllegalArgumentException e) {
                    connection.reject(new byte[0]);
                    throw e;
                }
                connection.accept(mine.encode(), SETUP_TIMEOUT);
            } else {
                InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(o.server), o.port);
                connection = RdmaConnection.resolve(to, local == null ? null : new InetSocketAddress(local, 0), opts,
                        SETUP_TIMEOUT);
                setUpOnConnection();
                connection.connect(mine.encode(), SETUP_TIMEOUT);
                peer = PerftestWire.decode(connection.peerPrivateData(), mine, slot + CTRL_SIZE);
            }
        }

        private void setUpOnConnection() throws RdmaException {
            ctx = connection.context();
            checkDevice(ctx);
            selection = ctx.selection();
            gidIndex = Math.max(0, selection.gidIndex());
            qp = connection.queuePair();
            cq = connection.completionQueue();
            allocate(connection.protectionDomain());
            byte[] gid = selection.gid() != null ? selection.gid().raw() : new byte[16];
            mine = describe(selection.port().lid(), psn(), gid);
        }

        // --- report header, as perftest's ctx_print_test_info and ctx_print_pingpong_data ---

        private void printHeader() {
            RdmaDevice dev = ctx.device();
            Port port = selection.port();
            String line = PerftestStats.RESULT_LINE;
            out.println(line);
            out.println("                    " + test.banner(o.fetchAndAdd));
            out.println(" Dual-port       : OFF\t\tDevice         : " + dev.name());
            out.println(" Number of qps   : 1\t\tTransport type : " + (ctx.transport() == Transport.IWARP ? "IW" : "IB"));
            out.println(" Connection type : RC\t\tUsing SRQ      : OFF");
            out.println(" PCIe relax order: OFF");
            out.println(" ibv_wr* API     : OFF");
            if (!server) {
                out.println(" TX depth        : " + o.txDepth);
            }
            if (test.verb == Verb.SEND && server) {
                out.println(" RX depth        : " + o.rxDepth());
            }
            if (test.bw) {
                out.println(" CQ Moderation   : " + o.cqMod());
            }
            out.println(" Mtu             : " + port.activeMtu() + "[B]");
            out.println(" Link type       : " + (port.linkLayer() == LinkLayer.ETHERNET ? "Ethernet" : "IB"));
            if (o.gidIndex != null || o.rdmaCm) {
                out.println(" GID index       : " + gidIndex);
            }
            if (test.verb == Verb.READ || test.verb == Verb.ATOMIC) {
                out.println(" Outstand reads  : " + outReads);
            } else {
                out.println(" Max inline data : " + o.inline() + "[B]");
            }
            out.println(" rdma_cm QPs\t : " + (o.rdmaCm ? "ON" : "OFF"));
            out.println(" Data ex. method : " + (o.rdmaCm ? "rdma_cm" : "Ethernet"));
            if (o.rdmaCm && server) {
                out.println(line);
                out.println(" Waiting for client rdma_cm QP to connect");
                out.println(" Please run the same command with the IB/RoCE interface IP");
            }
            out.println(line);
            printAddress("local", mine);
            printAddress("remote", peer);
            out.println(line);
        }

        /** Whether this side prints result rows: perftest's read_lat and atomic_lat servers print none. */
        private boolean printsRows() {
            return test.bw || !server || test.verb == Verb.WRITE || test.verb == Verb.SEND;
        }

        private void printAddress(String side, PerftestWire w) {
            StringBuilder sb = new StringBuilder(" ").append(side).append(" address: LID ")
                    .append(PerftestStats.cHex(w.lid(), 4)).append(" QPN ").append(PerftestStats.cHex(w.qpn(), 6))
                    .append(" PSN ").append(PerftestStats.cHex(w.psn(), 6));
            if (test.verb == Verb.READ) {
                sb.append(" OUT ").append(PerftestStats.cHex(outReads, 4));
            }
            if (!o.rdmaCm && (test.verb == Verb.READ || test.verb == Verb.WRITE)) {
                sb.append(" RKey ").append(PerftestStats.cHex(Integer.toUnsignedLong(w.rkey()), 8))
                        .append(" VAddr ").append(PerftestStats.cHex(w.address(), 16));
            }
            out.println(sb);
            if (gidIndex >= 0) {
                out.println(PerftestStats.gidLine(w.gid()));
            }
        }

        // --- the runs ---

        private void runAll() throws IOException {
            int[] sizes = o.sizes();
            if (o.warmup()) {
                warmUp(sizes);
            }
            // The column header comes after the warm-up's stderr line, right above its rows, as perftest's.
            if (printsRows()) {
                out.println(test.bw ? (o.reportGbits ? PerftestStats.RESULT_FMT_BW_G : PerftestStats.RESULT_FMT_BW)
                        : o.duration != null ? PerftestStats.RESULT_FMT_LAT_DUR : PerftestStats.RESULT_FMT_LAT);
            }
            runSizes(sizes);
            barrier(phaseTimeout(sizes[sizes.length - 1]));
            if (printsRows()) {
                out.println(PerftestStats.RESULT_LINE);
            }
        }

        /**
         * Same loops, same peer, rows thrown away, round after round until the JIT on both sides has
         * been idle for {@link #JIT_QUIET_NANOS}: C2 compiles them here, not during the reported run.
         */
        private void warmUp(int[] sizes) throws IOException {
            PrintStream real = out;
            out = new PrintStream(OutputStream.nullOutputStream());
            long start = System.nanoTime();
            long max = Duration.ofSeconds(o.warmupMaxSeconds).toNanos();
            long jitSeen = JitActivity.now();
            long jitChangedAt = start;
            long timeout = phaseTimeout(sizes[sizes.length - 1]); // a passive side waits out the peer's whole round
            int rounds = 0;
            boolean more;
            try {
                do {
                    runSizes(sizes);
                    rounds++;
                    long now = System.nanoTime();
                    long jit = JitActivity.now();
                    if (jit != jitSeen) {
                        jitSeen = jit;
                        jitChangedAt = now;
                    }
                    more = agree(now - jitChangedAt < JIT_QUIET_NANOS, now - start >= max, timeout);
                } while (more);
            } finally {
                out = real;
            }
            err.printf("warm-up: %d rounds in %.1f s (until the JIT is idle for %d s on both sides, at most %d s)%n",
                    rounds, (System.nanoTime() - start) / 1e9, JIT_QUIET_NANOS / 1_000_000_000, o.warmupMaxSeconds);
        }

        /**
         * A barrier at which each side also says whether its JIT is still busy and whether its cap is
         * reached: another round follows while either is busy and neither is capped, so the smaller cap
         * wins. The vote has its own word, which the peer writes again only at the next vote, after a
         * barrier this side takes part in; the barrier word may already hold the next generation.
         */
        private boolean agree(boolean busy, boolean capped, long timeoutNanos) throws RdmaException {
            long gen = barrierGen + 1; // the generation of the barrier below
            long outVote = 2L * slot + OUT_VOTE;
            mem.set(JAVA_LONG, outVote, gen << 2 | (capped ? 2 : 0) | (busy ? 1 : 0));
            writeCtrl(outVote, 8, CTRL_VOTE, STALL_NANOS);
            barrier(timeoutNanos);
            // iWARP does not promise that two Writes are placed in order: wait for the vote itself.
            long at = 2L * slot + CTRL_VOTE;
            long since = System.nanoTime();
            long vote;
            while ((vote = (long) LONG.getAcquire(mem, at)) >>> 2 != gen) {
                if (System.nanoTime() - since > STALL_NANOS) {
                    throw new RdmaException("the peer's warm-up vote is for step " + (vote >>> 2) + ", expected "
                            + gen + ": is it running the same version of rdma-bench?");
                }
                Thread.onSpinWait();
            }
            boolean peerBusy = (vote & 1) != 0, peerCapped = (vote & 2) != 0;
            return (busy || peerBusy) && !(capped || peerCapped);
        }

        private void runSizes(int[] sizes) throws IOException {
            for (int size : sizes) {
                // The peer's writes land in [slot, 2 slot); a byte left from the warm-up run
                // must not look like this run's first write. The peer writes again only after the barrier.
                mem.asSlice(slot, slot).fill((byte) 0);
                runRecvBase = recvs;
                barrier(phaseTimeout(size));
                dataDone = 0;
                switch (test) {
                    case WRITE_LAT -> writeLat(size);
                    case SEND_LAT -> sendLat(size);
                    case READ_LAT, ATOMIC_LAT -> {
                        if (!server) {
                            readOrAtomicLat(size);
                        }
                    }
                    case WRITE_BW, READ_BW, SEND_BW -> bandwidth(size);
                }
            }
        }

        /** How long a side may wait at a barrier for its peer's run: generous, never forever. */
        private long phaseTimeout(int size) {
            long perIter = 5_000_000L + size * 1_000L; // 5 ms + 1 MB/s under emulation
            long base = Duration.ofSeconds(60).toNanos();
            return o.duration != null ? base + Duration.ofSeconds(o.duration).toNanos()
                    : base + o.iters * perIter;
        }

        private void startClock() {
            long now = System.nanoTime();
            long d = Duration.ofSeconds(o.duration).toNanos();
            tSample = now + MARGIN_NANOS;
            tStop = now + d - MARGIN_NANOS;
            tEnd = now + d;
            state = 0;
        }

        /** Advances the duration state machine; {@code count} is the running total of finished operations. */
        private boolean ended(long now, long count) {
            if (state == 0 && now - tSample >= 0) {
                state = 1;
                sampleStart = now;
                sampleBase = count;
            }
            if (state == 1 && now - tStop >= 0) {
                state = 2;
                sampleEnd = now;
                sampleCount = count - sampleBase;
            }
            return now - tEnd >= 0;
        }

        private void writeLat(int size) throws RdmaException {
            int n = o.iters;
            boolean duration = o.duration != null;
            long pollAt = slot + size - 1;
            long postAt = size - 1;
            data.inline(0, false).opcode(0, Opcode.RDMA_WRITE).signaled(0, true).sge(mr, 0, size)
                    .remote(peer.address(), peer.rkey()).inline(0, size <= o.inline());
            if (duration) {
                startClock();
            }
            long scnt = 0, rcnt = 0;
            boolean first = server; // perftest: the server writes first in write_lat
            outer:
            while (duration || scnt < n || rcnt < n || dataDone < n) {
                if ((duration || rcnt < n) && !first) {
                    rcnt++;
                    byte want = (byte) rcnt;
                    long since = System.nanoTime();
                    while ((byte) BYTE.getAcquire(mem, pollAt) != want) {
                        long now = System.nanoTime();
                        if (duration ? ended(now, dataDone) : now - since > STALL_NANOS) {
                            if (duration) {
                                break outer;
                            }
                            throw stalled("the peer's RDMA Write " + rcnt);
                        }
                    }
                }
                first = false;
                if (duration || scnt < n) {
                    long now = System.nanoTime();
                    if (duration) {
                        if (ended(now, dataDone)) {
                            break;
                        }
                    } else {
                        tposted[(int) scnt] = now;
                    }
                    mem.set(JAVA_BYTE, postAt, (byte) ++scnt);
                    data.wrId(0, scnt - 1);
                    qp.postSend(data);
                    awaitData(scnt);
                }
            }
            latencyRow(size, n, duration, 2);
        }

        private void sendLat(int size) throws RdmaException {
            int n = o.iters;
            boolean duration = o.duration != null;
            data.inline(0, false).opcode(0, Opcode.SEND).signaled(0, true).sge(mr, 0, size)
                    .inline(0, size <= o.inline());
            if (duration) {
                startClock();
            }
            long base = runRecvBase;
            long scnt = 0, rcnt = 0;
            boolean first = !server; // perftest: the client sends first in send_lat
            outer:
            while (duration || scnt < n || rcnt < n) {
                if ((duration || rcnt < n) && !first) {
                    long since = System.nanoTime();
                    while (recvs - base <= rcnt) {
                        if (poll() == 0) {
                            long now = System.nanoTime();
                            if (duration ? ended(now, dataDone) : now - since > STALL_NANOS) {
                                if (duration) {
                                    break outer;
                                }
                                throw stalled("the peer's Send " + (rcnt + 1));
                            }
                        }
                    }
                    rcnt++;
                    if (postedRecvs < totalRecvs) {
                        qp.postRecv(recv);
                        postedRecvs++;
                    }
                }
                first = false;
                if (duration || scnt < n) {
                    long now = System.nanoTime();
                    if (duration) {
                        if (ended(now, dataDone)) {
                            break;
                        }
                    } else {
                        tposted[(int) scnt] = now;
                    }
                    data.wrId(0, scnt++);
                    qp.postSend(data);
                    awaitData(scnt);
                }
            }
            latencyRow(size, n, duration, 2);
        }

        /** perftest's result row: {@code divisor} 2 reports half the round trip (write, send), 1 the whole (read, atomic). */
        private void latencyRow(int size, int n, boolean duration, int divisor) {
            out.println(duration
                    ? PerftestStats.latencyDurationRow(size, sampleCount, sampleEnd - sampleStart, divisor)
                    : PerftestStats.latency(size, tposted, n, divisor).row());
        }

        private void readOrAtomicLat(int size) throws RdmaException {
            int n = o.iters;
            boolean duration = o.duration != null;
            if (test.verb == Verb.READ) {
                data.opcode(0, Opcode.RDMA_READ).signaled(0, true).sge(mr, 0, size).remote(peer.address(), peer.rkey());
            } else {
                data.opcode(0, o.fetchAndAdd ? Opcode.ATOMIC_FETCH_AND_ADD : Opcode.ATOMIC_CMP_AND_SWP)
                        .signaled(0, true).sge(mr, 0, 8).atomic(0, peer.address(), peer.rkey(), o.fetchAndAdd ? 1 : 0, 1);
            }
            if (duration) {
                startClock();
            }
            for (long scnt = 0; duration || scnt < n; ) {
                long now = System.nanoTime();
                if (duration) {
                    if (ended(now, dataDone)) {
                        break;
                    }
                } else {
                    tposted[(int) scnt] = now;
                }
                data.wrId(0, scnt++);
                qp.postSend(data);
                awaitData(scnt);
            }
            latencyRow(size, n, duration, 1);
        }

        private void bandwidth(int size) throws IOException {
            if (!server) {
                PerftestStats.Bandwidth bw = bwClient(size);
                out.println(bw.row());
                if (test.verb != Verb.SEND) {
                    sendReport(bw);
                }
            } else if (test.verb == Verb.SEND) {
                out.println(bwSendServer(size).row());
            } else {
                // The client's figures come before the next barrier (RDMA Writes on one QP arrive in order).
                barrier(phaseTimeout(size));
                long r = 2L * slot + CTRL_REPORT;
                out.println(new PerftestStats.Bandwidth(mem.get(JAVA_LONG, r), mem.get(JAVA_LONG, r + 8),
                        Double.longBitsToDouble(mem.get(JAVA_LONG, r + 16)), Double.longBitsToDouble(mem.get(JAVA_LONG, r + 24)),
                        Double.longBitsToDouble(mem.get(JAVA_LONG, r + 32))).row());
            }
        }

        private PerftestStats.Bandwidth bwClient(int size) throws RdmaException {
            int n = o.iters;
            boolean duration = o.duration != null;
            int tx = o.txDepth;
            int cqMod = o.cqMod();
            boolean credits = test.verb == Verb.SEND && ctx.transport() == Transport.IWARP;
            int rxDepth = o.rxDepth();
            long creditAt = 2L * slot + CTRL_CREDIT;
            Opcode op = switch (test.verb) {
                case SEND -> Opcode.SEND;
                case READ -> Opcode.RDMA_READ;
                default -> Opcode.RDMA_WRITE;
            };
            data.inline(0, false).opcode(0, op).signaled(0, true).sge(mr, 0, size);
            if (op != Opcode.SEND) {
                data.remote(0, peer.address(), peer.rkey());
            }
            data.inline(0, op != Opcode.RDMA_READ && size <= o.inline());
            recordCompletions = !duration;
            if (duration) {
                startClock();
            }
            long scnt = 0;
            long lastProgress = System.nanoTime();
            long lastDone = 0;
            while (duration || dataDone < n) {
                while ((duration || scnt < n) && scnt - dataDone < tx
                        && (!credits || totalSent - (long) LONG.getAcquire(mem, creditAt) < rxDepth)) {
                    // perftest's moderation: every cqMod-th WR and the last one ask for a completion.
                    data.signaled(0, scnt % cqMod == cqMod - 1 || (!duration && scnt == n - 1));
                    data.wrId(0, scnt);
                    long now = System.nanoTime();
                    if (!duration) {
                        tposted[(int) scnt] = now;
                    } else if (ended(now, dataDone)) {
                        break;
                    }
                    qp.postSend(data);
                    scnt++;
                    totalSent++;
                }
                long now = System.nanoTime();
                if (duration && ended(now, dataDone)) {
                    break;
                }
                poll();
                if (dataDone != lastDone) {
                    lastDone = dataDone;
                    lastProgress = now;
                } else if (now - lastProgress > STALL_NANOS) {
                    throw stalled("completion of WR " + dataDone);
                }
            }
            recordCompletions = false;
            if (duration) {
                // One size only: the WRs still in flight finish before the barrier's ordered control write.
                return PerftestStats.bandwidth(size, sampleCount, null, null, cqMod, sampleStart, sampleEnd, o.reportGbits);
            }
            return PerftestStats.bandwidth(size, n, tposted, tcompleted, cqMod, tposted[0], tcompleted[n - 1],
                    o.reportGbits);
        }

        private PerftestStats.Bandwidth bwSendServer(int size) throws RdmaException {
            int n = o.iters;
            boolean duration = o.duration != null;
            boolean credits = ctx.transport() == Transport.IWARP;
            int creditEvery = Math.max(1, o.rxDepth() / 4);
            long base = runRecvBase;
            long start = 0, end = 0;
            long since = System.nanoTime();
            boolean started = false;
            while (duration || recvs - base < n) {
                int got = poll();
                long now = System.nanoTime();
                if (!started && recvs > base) {
                    started = true;
                    start = firstRecvAt;
                    if (duration) {
                        startClock();
                    }
                }
                if (duration && started && ended(now, recvs - base)) {
                    break;
                }
                while (postedRecvs < totalRecvs && postedRecvs - recvs < o.rxDepth()) {
                    qp.postRecv(recv);
                    postedRecvs++;
                }
                if (credits && !creditInFlight && (recvs - lastCredit >= creditEvery || (got == 0 && recvs > lastCredit))) {
                    lastCredit = recvs;
                    mem.set(JAVA_LONG, 2L * slot + OUT_CREDIT, recvs);
                    credit.remote(0, peer.address() + slot + CTRL_CREDIT, peer.rkey());
                    creditInFlight = true;
                    qp.postSend(credit);
                }
                if (got > 0) {
                    since = now;
                } else if (!duration && now - since > STALL_NANOS) {
                    throw stalled("Send " + (recvs - base + 1) + " of " + n);
                } else if (duration && !started && now - since > phaseTimeout(size)) {
                    throw stalled("the first Send");
                }
            }
            end = System.nanoTime();
            if (!started) {
                start = firstRecvAt; // every Send of the run arrived while we were still in the barrier
            }
            if (duration) {
                return PerftestStats.bandwidth(size, sampleCount, null, null, 1, sampleStart, sampleEnd, o.reportGbits);
            }
            return PerftestStats.bandwidth(size, n, null, null, 1, start, end, o.reportGbits);
        }

        // --- completions, barriers, reports ---

        /** One {@code ibv_poll_cq}: counts receives, data completions (by wr_id index) and control writes. */
        private int poll() throws RdmaException {
            int n = cq.poll(batch);
            if (n == 0) {
                return 0;
            }
            long now = System.nanoTime();
            for (int i = 0; i < n; i++) {
                if (!batch.isSuccess(i)) {
                    batch.requireSuccess(i);
                }
                long id = batch.wrId(i);
                if (id == RECV_ID) {
                    if (recvs++ == runRecvBase) {
                        firstRecvAt = now;
                    }
                } else if (id == CTRL_ID) {
                    ctrlDone = true;
                } else if (id == CREDIT_ID) {
                    creditInFlight = false;
                } else {
                    dataDone = id + 1;
                    if (recordCompletions && id < tcompleted.length) {
                        tcompleted[(int) id] = now;
                    }
                }
            }
            return n;
        }

        private void awaitData(long count) throws RdmaException {
            long since = System.nanoTime();
            while (dataDone < count) {
                if (poll() == 0 && System.nanoTime() - since > STALL_NANOS) {
                    throw stalled("the completion of operation " + count);
                }
            }
        }

        private RdmaException stalled(String what) {
            return new RdmaException("no progress for " + STALL_NANOS / 1_000_000_000 + " s waiting for " + what
                    + ": is the peer still running with the same flags?");
        }

        private void writeCtrl(long localOffset, int length, long remoteOffset, long timeoutNanos) throws RdmaException {
            ctrl.sge(mr, localOffset, length).remote(0, peer.address() + slot + remoteOffset, peer.rkey());
            ctrlDone = false;
            qp.postSend(ctrl);
            long since = System.nanoTime();
            while (!ctrlDone) {
                if (poll() == 0 && System.nanoTime() - since > timeoutNanos) {
                    throw new RdmaException("a control RDMA Write to the peer did not complete within "
                            + timeoutNanos / 1_000_000_000 + " s");
                }
            }
        }

        /**
         * Both sides write their next barrier generation into the other's barrier word, then wait to see
         * the peer's. Both call barrier() the same number of times, so the generations match.
         */
        private void barrier(long timeoutNanos) throws RdmaException {
            long gen = ++barrierGen;
            long out = 2L * slot + OUT_BARRIER;
            mem.set(JAVA_LONG, out, gen);
            writeCtrl(out, 8, CTRL_BARRIER, STALL_NANOS);
            long at = 2L * slot + CTRL_BARRIER;
            long since = System.nanoTime();
            while ((long) LONG.getAcquire(mem, at) < gen) {
                poll(); // keeps counting completions (e.g. credit writes) while waiting
                long waited = System.nanoTime() - since;
                if (waited > BARRIER_SPIN_NANOS) {
                    // The passive side of a bandwidth or read test waits here for the whole run. Spinning
                    // would take the CPU that the peer and the kernel's RDMA work need; perftest's passive
                    // side sleeps in a socket read. Nothing timed waits here.
                    LockSupport.parkNanos(BARRIER_PARK_NANOS);
                }
                if (waited > timeoutNanos) {
                    throw new RdmaException("the peer did not reach step " + gen + " within "
                            + timeoutNanos / 1_000_000_000 + " s: is it still running with the same flags?");
                }
            }
        }

        private void sendReport(PerftestStats.Bandwidth bw) throws RdmaException {
            long r = 2L * slot + OUT_REPORT;
            mem.set(JAVA_LONG, r, bw.size());
            mem.set(JAVA_LONG, r + 8, bw.iters());
            mem.set(JAVA_LONG, r + 16, Double.doubleToRawLongBits(bw.peak()));
            mem.set(JAVA_LONG, r + 24, Double.doubleToRawLongBits(bw.avg()));
            mem.set(JAVA_LONG, r + 32, Double.doubleToRawLongBits(bw.msgRate()));
            writeCtrl(r, REPORT_BYTES, CTRL_REPORT, STALL_NANOS);
            barrier(STALL_NANOS); // the server's extra barrier after a report (see bandwidth())
        }

        @Override
        public void close() {
            for (AutoCloseable c : new AutoCloseable[] {data, ctrl, credit, recv, batch}) {
                closeQuietly(c);
            }
            if (connection != null) {
                try {
                    if (server) {
                        connection.awaitDisconnect(Duration.ofSeconds(10));
                    } else {
                        connection.disconnect();
                    }
                } catch (RdmaException e) {
                    // closing anyway
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            closeQuietly(connection);
            closeQuietly(listener);
            closeQuietly(ownedContext);
        }

        private static void closeQuietly(AutoCloseable c) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    // teardown after a failure: the first error is what the user sees
                }
            }
        }
    }
}
