package org.rdmapanama.bench.perftest;


import org.rdmapanama.device.Port;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * Native perftest's exchange, as perftest 4.5 (version string "6.06") speaks
 * it on port 18515: over TCP without {@code -R} ({@link PerftestTcpExchange}),
 * as Sends on a first rdma_cm connection with it ({@link PerftestCmExchange}).
 * Every message is a fixed-size block that the client writes first and the
 * server reads first ({@code ctx_xchg_data}, {@code ctx_hand_shake}). In order:
 * <ol>
 *   <li>the version, 16 bytes, a C string; perftest refuses peers older than 5.70;</li>
 *   <li>the "system data": cycle buffer (page size) and cache line size, 4 bytes
 *       each, big-endian; both sides take the larger;</li>
 *   <li>the active MTU as {@code enum ibv_mtu} in decimal, 2 bytes ("3\0"); both take the smaller;</li>
 *   <li>QP addresses ({@link PerftestKeys}), once per handshake: a test's handshakes
 *       are its only synchronization (before connecting, before the run, per size
 *       for the Send tests, and at the end);</li>
 *   <li>at the end, write_bw and read_bw clients hand their figures to the server
 *       (size, iterations as 8-byte integers, peak, average and message rate as
 *       8-byte big-endian doubles, one exchange each); then a last handshake,
 *       after which, over TCP, each side writes "done\0", which nobody reads.</li>
 * </ol>
 * An rdma-bench peer is told apart by the bytes after the version's NUL, which
 * perftest ignores: "rdma-bench" and our protocol number. Two Java ends then
 * add their parameter check ({@link PerftestWire}) and run with barriers and a
 * warm-up in the control area; a native peer never sees any of it.
 */
abstract class PerftestExchange implements AutoCloseable {
    static final String VERSION = "6.06";
    static final double MIN_VERSION = 5.70;
    static final int VERSION_SIZE = 16;
    private static final byte[] JAVA_TAG = "rdma-bench".getBytes(StandardCharsets.US_ASCII);
    /** perftest's default cycle buffer is the page size; x86-64's. */
    static final int CYCLE_BUFFER = 4096;
    static final int CACHE_LINE = 64;

    private final boolean client;

    PerftestExchange(boolean client) {
        this.client = client;
    }

    /** What the peer's version block said. */
    record Hello(String version, boolean java, int protocol) {}

    static byte[] encodeVersion(int protocol) {
        byte[] b = new byte[VERSION_SIZE];
        byte[] v = VERSION.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(v, 0, b, 0, v.length);
        System.arraycopy(JAVA_TAG, 0, b, v.length + 1, JAVA_TAG.length); // after the NUL: atof() stops there
        b[v.length + 1 + JAVA_TAG.length] = (byte) protocol;
        return b;
    }

    /** Parses a peer's version block and applies perftest's check ({@code check_version_compatibility}). */
    static Hello decodeVersion(byte[] b) {
        int nul = 0;
        while (nul < b.length && b[nul] != 0) {
            nul++;
        }
        String version = new String(b, 0, nul, StandardCharsets.US_ASCII);
        if (leadingNumber(version) < MIN_VERSION) {
            String shown = new String(b, 0, Math.min(nul, 8), StandardCharsets.ISO_8859_1).replaceAll("[^ -~]", "?");
            throw new IllegalArgumentException("Current implementation is not compatible with versions older than 5.70"
                    + " (the peer sent version \"" + shown + "\"" + (b[0] == 'P' && b[1] == 'T'
                    ? ": an rdma-bench from before perftest wire compatibility" : "") + ")");
        }
        int tag = nul + 1;
        boolean java = tag + JAVA_TAG.length < b.length
                && Arrays.equals(b, tag, tag + JAVA_TAG.length, JAVA_TAG, 0, JAVA_TAG.length);
        return new Hello(version, java, java ? b[tag + JAVA_TAG.length] & 0xff : 0);
    }

    /** C's atof on a version string: the leading decimal number, 0 when there is none. */
    static double leadingNumber(String s) {
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        try {
            return i == 0 ? 0 : Double.parseDouble(s.substring(0, i));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The MTU block: {@code enum ibv_mtu} (1 = 256 B .. 5 = 4096 B) in decimal, 2 bytes. */
    static byte[] encodeMtu(int ibvMtu) {
        return new byte[] {(byte) ('0' + ibvMtu), 0};
    }

    /** The smaller of the two MTUs, as perftest takes it; a peer's invalid value leaves ours. */
    static int agreeMtu(int mine, byte[] peer) {
        int rem = peer[0] >= '0' && peer[0] <= '9' ? peer[0] - '0' : 0;
        return rem >= 1 && rem <= 5 && rem < mine ? rem : mine;
    }

    /** The version block each way; returns what the peer's said, after perftest's check. */
    Hello hello(int protocol, Duration timeout) throws IOException {
        return decodeVersion(xchg(encodeVersion(protocol), timeout));
    }

    /** perftest's check_sys_data: both sides use the larger cycle buffer and cache line. */
    int[] sysData(int cycleBuffer, int cacheLine, Duration timeout) throws IOException {
        int cb = ByteBuffer.wrap(xchg(ByteBuffer.allocate(4).putInt(cycleBuffer).array(), timeout)).getInt();
        int cl = ByteBuffer.wrap(xchg(ByteBuffer.allocate(4).putInt(cacheLine).array(), timeout)).getInt();
        return new int[] {Math.max(cb, cycleBuffer), Math.max(cl, cacheLine)};
    }

    int mtu(int ibvMtu, Duration timeout) throws IOException {
        return agreeMtu(ibvMtu, xchg(encodeMtu(ibvMtu), timeout));
    }

    /** What the blocks before any resource settled: who the peer is, the cycle buffer, the MTU in bytes. */
    record Agreed(boolean nativePeer, int cycleBuffer, int mtuBytes) {}

    /**
     * The version, system-data and MTU blocks, in perftest's order; a Java peer must speak {@code protocol}.
     * {@code activeMtuBytes}: our port's.
     */
    Agreed agree(int protocol, int activeMtuBytes, Duration timeout) throws IOException {
        Hello hello = hello(protocol, timeout);
        if (hello.java() && hello.protocol() != protocol) {
            throw new IllegalArgumentException("the peer is rdma-bench with perftest protocol " + hello.protocol()
                    + ", this side " + protocol + ": run the same rdma-bench on both sides");
        }
        int[] sys = sysData(CYCLE_BUFFER, CACHE_LINE, timeout);
        int mtu = mtu(Integer.numberOfTrailingZeros(activeMtuBytes) - 7, timeout);
        return new Agreed(!hello.java(), sys[0], Port.mtuBytes(mtu));
    }

    /** What runs between the first handshakes and the next: without -R, our QPs connect to the peer's. */
    @FunctionalInterface
    interface Connect {
        void run() throws IOException;
    }

    /**
     * The test's handshakes before its run, in perftest's order: one per QP (each lane gets the peer's QP
     * address), {@code connect}, one more per QP, then single ones; the last says both sides are at RTS.
     */
    void handshakes(PerftestLane[] lanes, PerftestOptions.Test test, Duration timeout, Connect connect)
            throws IOException {
        for (PerftestLane l : lanes) {
            l.peerKeys(handshake(l.keys(), timeout));
        }
        connect.run();
        for (int h = 1; h < handshakesBeforeRun(test); h++) {
            for (int i = 0; i < (h == 1 ? lanes.length : 1); i++) {
                handshake(lanes[i].keys(), timeout);
            }
        }
    }

    /** One handshake ({@code ctx_hand_shake}): our QP address for the peer's. */
    PerftestKeys handshake(PerftestKeys mine, Duration timeout) throws IOException {
        return decodeKeys(xchg(encodeKeys(mine), timeout), mine);
    }

    /** The bandwidth report: the client's figures go to the server, which answers with its own (unused). */
    PerftestStats.Bandwidth report(PerftestStats.Bandwidth mine, Duration timeout) throws IOException {
        long size = ByteBuffer.wrap(xchg(ByteBuffer.allocate(8).putLong(mine.size()).array(), timeout)).getLong();
        long iters = ByteBuffer.wrap(xchg(ByteBuffer.allocate(8).putLong(mine.iters()).array(), timeout)).getLong();
        double peak = xchgDouble(mine.peak(), timeout);
        double avg = xchgDouble(mine.avg(), timeout);
        double rate = xchgDouble(mine.msgRate(), timeout);
        return new PerftestStats.Bandwidth(size, iters, peak, avg, rate);
    }

    private double xchgDouble(double v, Duration timeout) throws IOException {
        return ByteBuffer.wrap(xchg(ByteBuffer.allocate(8).putDouble(v).array(), timeout)).getDouble();
    }

    /** perftest's ctx_close_connection: a last handshake, then "done\0", which the peer does not read. */
    void closeConnection(PerftestKeys mine, Duration timeout) throws IOException {
        handshake(mine, timeout);
        if (writesDone()) {
            write("done\0".getBytes(StandardCharsets.US_ASCII));
        }
    }

    /** A fixed-size block each way: the client writes first, the server reads first. */
    byte[] xchg(byte[] mine, Duration timeout) throws IOException {
        if (client) {
            write(mine);
            return read(mine.length, timeout);
        }
        byte[] got = read(mine.length, timeout);
        write(mine);
        return got;
    }

    /** How many handshakes native perftest makes before its run (write_lat.c etc.). */
    static int handshakesBeforeRun(PerftestOptions.Test test) {
        return switch (test) {
            case WRITE_LAT, READ_LAT, ATOMIC_LAT -> 4;
            case SEND_LAT, WRITE_BW, READ_BW, SEND_BW -> 3;
        };
    }

    /** The tests whose server only waits for the client's end: perftest's read, atomic and RDMA bandwidth tests. */
    static boolean clientDriven(PerftestOptions.Test test) {
        return switch (test) {
            case READ_LAT, ATOMIC_LAT, WRITE_BW, READ_BW -> true;
            case WRITE_LAT, SEND_LAT, SEND_BW -> false;
        };
    }

    /** Sends one block, whole. */
    abstract void write(byte[] b) throws IOException;

    /** Receives one block of {@code n} bytes, waiting at most {@code timeout}. */
    abstract byte[] read(int n, Duration timeout) throws IOException;

    /** For the peer watch: why the peer is gone, or null; never takes a block from {@link #read}. */
    abstract String peerGone();

    /** Our QP address as this channel carries it: perftest's text line over TCP, its struct over rdma_cm. */
    abstract byte[] encodeKeys(PerftestKeys mine);

    abstract PerftestKeys decodeKeys(byte[] msg, PerftestKeys mine);

    /** Whether perftest's ctx_close_connection writes "done" (TCP only). */
    abstract boolean writesDone();

    @Override
    public abstract void close() throws IOException;
}
