package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.Getopt;
import org.rdmapanama.device.Transport;

import java.io.PrintStream;
import java.util.List;

/**
 * The command line of the perftest-compatible subcommands ({@code write_lat},
 * {@code send_bw}, ...), with perftest's flags, defaults and checks. Parsing
 * is pure (no device), so it is unit-tested on the host: {@link Getopt} reads
 * the flags as perftest's getopt_long does, then {@link #parse} applies
 * perftest's checks across flags and its defaults.
 */
public final class PerftestOptions {

    /** perftest's {@code enum ctx_test_method} verbs and test kinds, one per subcommand. */
    public enum Test {
        WRITE_LAT("write_lat", Verb.WRITE, false),
        READ_LAT("read_lat", Verb.READ, false),
        SEND_LAT("send_lat", Verb.SEND, false),
        ATOMIC_LAT("atomic_lat", Verb.ATOMIC, false),
        WRITE_BW("write_bw", Verb.WRITE, true),
        READ_BW("read_bw", Verb.READ, true),
        SEND_BW("send_bw", Verb.SEND, true);

        final String command;
        final Verb verb;
        final boolean bw;

        Test(String command, Verb verb, boolean bw) {
            this.command = command;
            this.verb = verb;
            this.bw = bw;
        }

        public static Test of(String command) {
            for (Test t : values()) {
                if (t.command.equals(command)) {
                    return t;
                }
            }
            return null;
        }

        /** What perftest's banner calls the test: "RDMA_Write Latency Test", "Send BW Test". */
        String banner(boolean fetchAndAdd) {
            String v = switch (verb) {
                case SEND -> "Send";
                case WRITE -> "RDMA_Write";
                case READ -> "RDMA_Read";
                case ATOMIC -> "Atomic " + (fetchAndAdd ? "FETCH_AND_ADD" : "CMP_AND_SWAP");
            };
            return v + (bw ? " BW" : " Latency") + " Test";
        }
    }

    /** perftest's verb order (SEND, WRITE, READ, ATOMIC) decides what its address lines show. */
    enum Verb { SEND, WRITE, READ, ATOMIC }

    static final int DEFAULT_PORT = 18515;
    static final int MAX_SIZE = 1 << 23;           // perftest's MAX_SIZE: -a goes 2 .. 2^23
    static final int DEF_RX_SEND = 512;
    static final int DEF_CQ_MOD = 100;
    static final int MSG_SIZE_CQ_MOD_LIMIT = 8192; // above this perftest signals every WR
    static final int MIN_ITERS = 5;
    /** -q: one byte in the rdma-bench parameter check ({@link PerftestWire}). */
    static final int MAX_QPS = 255;
    static final int MAX_TOTAL_ITERS = 100_000_000;

    Test test;
    String device;
    int ibPort = 1;
    Integer gidIndex;
    int size;
    boolean sizeGiven;
    boolean allSizes;
    int iters;
    Integer duration;
    boolean rdmaCm;
    int txDepth;
    boolean txDepthGiven;
    int inlineSize = -1;
    /** {@code -q}: QPs of a bandwidth test, each running {@link #iters} (perftest's num_of_qps). */
    int numQps = 1;
    boolean reportGbits;
    /** {@code -N}: no peak bandwidth (see {@link #noPeak()}). */
    boolean noPeakGiven;
    int port = DEFAULT_PORT;
    String transport;
    String atomicType;
    boolean fetchAndAdd = true;
    /** The server's address: at most one, checked in parse() to say so in its own words. */
    List<String> addresses = List.of();
    String server;
    /** {@code -F}: accepted and ignored (perftest's CPU frequency check; we use System.nanoTime). */
    boolean ignoreCpuFreq;
    int warmupMaxSeconds = 60;
    boolean help;

    private void size(int s) {
        size = s;
        sizeGiven = true;
    }

    private void txDepth(int t) {
        txDepth = t;
        txDepthGiven = true;
    }

    /**
     * Unreported runs of the same test before the reported one, until the JIT
     * is idle: JMH's warm-up, for a tool that natively has none.
     */
    boolean warmup() {
        return warmupMaxSeconds > 0 && duration == null;
    }

    boolean isServer() {
        return server == null;
    }

    /** What this process is, for stderr lines that a server and a client may print into one terminal. */
    String who() {
        return test.command + (isServer() ? " server" : " client");
    }

    /** Sizes to run: {@code -s}, or 2, 4, ... 2^23 with {@code -a}. */
    int[] sizes() {
        if (!allSizes) {
            return new int[] {size};
        }
        int[] s = new int[23];
        for (int i = 1; i <= 23; i++) {
            s[i - 1] = 1 << i;
        }
        return s;
    }

    int maxSize() {
        return allSizes ? MAX_SIZE : size;
    }

    /** Receives kept posted for Send tests: perftest's rx depth (512, at most -n). */
    int rxDepth() {
        if (test.verb != Verb.SEND) {
            return 1;
        }
        return duration != null ? DEF_RX_SEND : Math.min(DEF_RX_SEND, iters);
    }

    /** perftest's CQ moderation: every 100th WR signaled, every WR above 8 KiB (not with -a), at most tx depth. */
    /**
     * Whether the BW peak is left out (printed as 0), as perftest 4.5 decides:
     * on {@code -N}, in duration mode, and for more than 20,000 iterations,
     * since the peak's search over all posted and completed pairs grows with
     * their square (at 150,000 iterations it took longer than the run itself here).
     */
    boolean noPeak() {
        return noPeakGiven || duration != null || iters > 20_000;
    }

    int cqMod() {
        int mod = DEF_CQ_MOD;
        if (size > MSG_SIZE_CQ_MOD_LIMIT && !allSizes) {
            mod = 1;
        }
        return Math.max(1, Math.min(mod, txDepth));
    }

    /** Inline bytes: {@code -I}, else 0 (perftest disables inline on devices it does not recognize, as rxe and siw). */
    int inline() {
        if (test.verb == Verb.READ || test.verb == Verb.ATOMIC) {
            return 0;
        }
        return Math.max(0, inlineSize);
    }

    /**
     * Parses {@code args} for {@code test}; null for {@code -h}.
     *
     * @throws IllegalArgumentException with a one-line message naming the bad flag or value
     */
    public static PerftestOptions parse(Test test, String[] args) {
        PerftestOptions o = new PerftestOptions();
        o.test = test;
        o.addresses = new Getopt()
                .value(Getopt.nonEmpty(d -> o.device = d), "-d", "--ib-dev")
                .value(Getopt.number(CliArgs.IB_PORT_MIN, CliArgs.IB_PORT_MAX, p -> o.ibPort = p), "-i", "--ib-port")
                .value(Getopt.number(CliArgs.GID_INDEX_MIN, CliArgs.GID_INDEX_MAX, x -> o.gidIndex = x), "-x", "--gid-index")
                .value(Getopt.number(1, MAX_SIZE, o::size), "-s", "--size")
                .flag(() -> o.allSizes = true, "-a", "--all")
                .value(Getopt.number(MIN_ITERS, MAX_TOTAL_ITERS, n -> o.iters = n), "-n", "--iters")
                .value(Getopt.number(1, 86_400, d -> o.duration = d), "-D", "--duration")
                .flag(() -> o.rdmaCm = true, "-R", "--rdma_cm")
                .value(Getopt.number(1, 16384, o::txDepth), "-t", "--tx-depth")
                .value(Getopt.number(0, 1 << 16, b -> o.inlineSize = b), "-I", "--inline_size")
                .value(Getopt.number(1, 65536, q -> o.numQps = q), "-q", "--qp")
                .flag(() -> o.reportGbits = true, "--report_gbits")
                .flag(() -> o.noPeakGiven = true, "-N", "--noPeak")
                .value(Getopt.number(CliArgs.PORT_MIN, CliArgs.PORT_MAX, p -> o.port = p), "-p", "--port")
                .value((typed, v) -> o.transport = transport(typed, v), "--transport")
                .value((typed, v) -> o.atomicType = v, "-A", "--atomic_type")
                .flag(() -> o.ignoreCpuFreq = true, "-F", "--CPU-freq")
                .value(Getopt.number(0, 3600, w -> o.warmupMaxSeconds = w), "--warmup")
                .flag(() -> o.warmupMaxSeconds = 0, "--no-warmup")
                .flag(() -> o.help = true, "-h", "--help")
                .parse(args);
        if (o.help) {
            return null;
        }
        if (o.noPeakGiven && !test.bw) {
            throw new IllegalArgumentException("option -N: NoPeak only valid for BW tests"); // perftest's words
        }
        if (o.numQps != 1) {
            if (!test.bw) {
                throw new IllegalArgumentException("option -q: Multiple QPs only available on bw tests"); // perftest's words
            }
            if (test.verb == Verb.SEND) {
                // Each QP would need its own receive ring and, without RNR retry, its own credits: not built.
                throw new IllegalArgumentException("option -q: send_bw runs 1 QP in rdma-bench (write_bw and read_bw "
                        + "take -q), got " + o.numQps);
            }
            if (o.duration != null) {
                // A -D run stops with WRs in flight, which on QP 0 the end's ordered control write waits behind;
                // on the others nothing would, so the server could close its regions under them.
                throw new IllegalArgumentException("option -q: -D runs 1 QP in rdma-bench, got -q " + o.numQps);
            }
            if (o.numQps > MAX_QPS) {
                throw new IllegalArgumentException("option -q: rdma-bench runs at most " + MAX_QPS
                        + " QPs (perftest takes 16384), got " + o.numQps);
            }
        }
        if (o.atomicType != null) {
            if (test.verb != Verb.ATOMIC) {
                throw new IllegalArgumentException("option -A is for atomic_lat only");
            }
            switch (o.atomicType) {
                case "FETCH_AND_ADD" -> o.fetchAndAdd = true;
                case "CMP_AND_SWAP" -> o.fetchAndAdd = false;
                default -> throw new IllegalArgumentException(
                        "option -A must be CMP_AND_SWAP or FETCH_AND_ADD, got '" + o.atomicType + "'");
            }
        }
        if (o.addresses.size() > 1) {
            throw new IllegalArgumentException("one server address at most, got " + String.join(" ", o.addresses));
        }
        o.server = o.addresses.isEmpty() ? null : o.addresses.getFirst();
        o.applyDefaults();
        return o;
    }

    private void applyDefaults() {
        if (test.verb == Verb.ATOMIC) {
            if (sizeGiven && size != 8) {
                throw new IllegalArgumentException("message size cannot be changed for atomic tests (always 8 bytes)");
            }
            if (allSizes) {
                throw new IllegalArgumentException("option -a does not apply to atomic tests (always 8 bytes)");
            }
            size = 8;
        } else if (!sizeGiven) {
            size = test.bw ? 65536 : 2;
        }
        if (allSizes && sizeGiven) {
            throw new IllegalArgumentException("options -a and -s exclude each other");
        }
        if (duration != null) {
            if (iters != 0) {
                throw new IllegalArgumentException("options -D and -n exclude each other");
            }
            if (allSizes) {
                throw new IllegalArgumentException("option -D cannot run with -a");
            }
            if (duration < 5) {
                throw new IllegalArgumentException("option -D must be at least 5 seconds (2 s warm-up and cool-down), got "
                        + duration);
            }
        }
        if (iters == 0) {
            iters = defaultIters(test); // as perftest's, so default runs on both ends measure the same count
        }
        if (!txDepthGiven) {
            txDepth = test.bw ? 128 : 1;
        }
        if (!test.bw && txDepth != 1) {
            throw new IllegalArgumentException("latency tests keep one operation in flight: -t must be 1, got " + txDepth);
        }
        if ((long) iters * numQps > MAX_TOTAL_ITERS) {
            throw new IllegalArgumentException("-n times -q must be at most " + MAX_TOTAL_ITERS + " (a timestamp each), got "
                    + iters + " x " + numQps);
        }
        if (duration == null && txDepth > iters) {
            txDepth = iters; // perftest: tx depth at most -n
        }
    }

    /** perftest 4.5's DEF_ITERS, and DEF_ITERS_WB for write_bw. */
    static int defaultIters(Test test) {
        return test == Test.WRITE_BW ? 5000 : 1000;
    }

    private static String transport(String typed, String v) {
        try {
            Transport.parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("option " + typed + ": " + e.getMessage());
        }
        return v;
    }

    static void usage(Test test, PrintStream s) {
        s.println("Usage:");
        s.println("  rdma-bench " + test.command + "            start a server and wait for connection");
        s.println("  rdma-bench " + test.command + " <host>     connect to server at <host>");
        s.println();
        s.println("Options:");
        s.println("  -a, --all                 Run sizes from 2 till 2^23");
        s.println("  -d, --ib-dev=<dev>        Use IB device <dev> (default: RDMA_DEVICE, else the first active)");
        s.println("  -D, --duration=<sec>      Run test for a customized period of seconds (at least 5)");
        s.println("  -F, --CPU-freq            Accepted, no effect (times come from System.nanoTime)");
        s.println("      --no-warmup           Skip the unreported warm-up rounds (same as --warmup=0)");
        s.println("      --warmup=<sec>        Repeat the run unreported until the JIT is idle, at most <sec> (default 60)");
        s.println("  -i, --ib-port=<port>      Use port <port> of IB device (default 1)");
        s.println("  -I, --inline_size=<size>  Max size of message to be sent in inline (default 0)");
        s.println("  -n, --iters=<iters>       Number of exchanges (at least " + MIN_ITERS + ", default "
                + defaultIters(test) + ")");
        s.println("  -p, --port=<port>         Listen on/connect to port <port> (default " + DEFAULT_PORT + ")");
        if (test.bw) {
            s.println("  -q, --qp=<num of qp's>    Num of qp's (default 1" + (test.verb == Verb.SEND
                    ? "; send_bw runs 1)" : ", at most " + MAX_QPS + ")"));
        }
        s.println("  -R, --rdma_cm             Connect QPs with rdma_cm and run test on those QPs (needed for iWARP)");
        s.println("  -s, --size=<size>         Size of message to exchange (default " + (test.verb == Verb.ATOMIC ? 8
                : test.bw ? 65536 : 2) + ")");
        s.println("  -t, --tx-depth=<dep>      Size of tx queue (default " + (test.bw ? 128 : 1) + ")");
        s.println("  -x, --gid-index=<index>   Test uses GID with GID index");
        if (test.verb == Verb.ATOMIC) {
            s.println("  -A, --atomic_type=<type>  CMP_AND_SWAP or FETCH_AND_ADD (default FETCH_AND_ADD)");
        }
        if (test.bw) {
            s.println("      --report_gbits        Report Max/Average BW of test in Gbit/sec (instead of MB/sec)");
            s.println("  -N, --noPeak              Cancel peak-bw calculation (default with peak up to iters=20000)");
        }
        s.println("      --transport=<t>       iwarp, rocev2 or ib (default: RDMA_TRANSPORT, else any)");
    }
}
