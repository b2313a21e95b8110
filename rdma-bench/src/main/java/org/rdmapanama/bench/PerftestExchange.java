package org.rdmapanama.bench;

import org.rdmapanama.error.RdmaException;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Native perftest's TCP exchange (no {@code -R}), as perftest 4.5 (version
 * string "6.06") speaks it on port 18515: every message is a fixed-size
 * block that the client writes first and the server reads first
 * ({@code ctx_xchg_data}, {@code ctx_hand_shake}). In order:
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
 *       8-byte big-endian doubles, one exchange each); then each side writes
 *       "done\0", which nobody reads, and closes.</li>
 * </ol>
 * An rdma-bench peer is told apart by the bytes after the version's NUL, which
 * perftest ignores: "rdma-bench" and our protocol number. Two Java ends then
 * add their parameter check ({@link PerftestWire}) and run with barriers and a
 * warm-up in the control area; a native peer never sees any of it.
 * <p>
 * The channel is non-blocking: reads wait with a deadline, and
 * {@link #peerGone()} (the run's peer watch) stashes bytes that arrive early
 * (a native read_lat server sends its last handshake as soon as the run
 * starts) for the next read, so the watch never eats the protocol.
 */
final class PerftestExchange implements AutoCloseable {
    static final String VERSION = "6.06";
    static final double MIN_VERSION = 5.70;
    static final int VERSION_SIZE = 16;
    private static final byte[] JAVA_TAG = "rdma-bench".getBytes(StandardCharsets.US_ASCII);
    /** perftest's default cycle buffer is the page size; x86-64's. */
    static final int CYCLE_BUFFER = 4096;
    static final int CACHE_LINE = 64;
    private static final long PARK_NANOS = Duration.ofMillis(1).toNanos();

    private final SocketChannel ch;
    private final boolean client;
    private final String peerName;
    private ByteBuffer stash = ByteBuffer.allocate(256).flip();
    private boolean eof;

    private PerftestExchange(SocketChannel ch, boolean client, String peerName) throws IOException {
        this.ch = ch;
        this.client = client;
        this.peerName = peerName;
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(false);
    }

    /** Listens on {@code port}, prints the waiting banner, and accepts one client. */
    static PerftestExchange accept(int port, Duration timeout, PrintStream out) throws IOException {
        try (ServerSocketChannel ssc = ServerSocketChannel.open()) {
            ssc.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ssc.bind(new InetSocketAddress(port));
            ssc.socket().setSoTimeout((int) timeout.toMillis());
            PerftestHeader.waiting(out);
            Socket s = ssc.socket().accept();
            return new PerftestExchange(s.getChannel(), false, "client");
        } catch (SocketTimeoutException e) {
            throw new RdmaException("no client connected to TCP port " + port + " within " + timeout.toSeconds() + " s", e);
        }
    }

    static PerftestExchange connect(String host, int port, Duration timeout) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.socket().connect(new InetSocketAddress(InetAddress.getByName(host), port), (int) timeout.toMillis());
            return new PerftestExchange(ch, true, "server");
        } catch (ConnectException e) {
            ch.close();
            throw new RdmaException("Couldn't connect to " + host + ":" + port + " (" + e.getMessage()
                    + "): is the server running?", e);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
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

    /** Versions, system data and MTU; returns the peer's hello. Sets the agreed values on {@code into}. */
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

    /** One handshake ({@code ctx_hand_shake}): our QP address for the peer's. */
    PerftestKeys handshake(PerftestKeys mine, Duration timeout) throws IOException {
        return PerftestKeys.decode(xchg(mine.encode(), timeout), mine.gid() != null);
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
        write("done\0".getBytes(StandardCharsets.US_ASCII));
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

    void write(byte[] b) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(b);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (buf.hasRemaining()) {
            if (ch.write(buf) == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new RdmaException("the " + peerName + " took no data on the setup connection for 30 s");
                }
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
    }

    byte[] read(int n, Duration timeout) throws IOException {
        byte[] b = new byte[n];
        int got = 0;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (got < n) {
            if (stash.hasRemaining()) {
                int k = Math.min(n - got, stash.remaining());
                stash.get(b, got, k);
                got += k;
                continue;
            }
            if (eof) {
                throw new RdmaException("the " + peerName + " closed the setup connection after " + got + " of " + n
                        + " bytes (is it perftest 4.5 or rdma-bench, running the same test with the same flags?)");
            }
            if (!fill()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new RdmaException("the " + peerName + " sent " + got + " of " + n + " bytes in "
                            + timeout.toSeconds() + " s: is it still running the same test with the same flags?");
                }
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
        return b;
    }

    /** Reads what has arrived into the stash; false when nothing did. */
    private boolean fill() throws IOException {
        stash.compact();
        if (!stash.hasRemaining()) {
            stash = ByteBuffer.allocate(stash.capacity() * 2).put(stash.flip());
        }
        int r = ch.read(stash);
        stash.flip();
        if (r < 0) {
            eof = true;
        }
        return r != 0;
    }

    /** For the peer watch: why the peer is gone (its connection ended), or null. Keeps any bytes for {@link #read}. */
    String peerGone() {
        try {
            while (!eof && fill()) {
                // drain what has arrived; a closed stream sets eof
            }
            return eof ? "its TCP connection closed" : null;
        } catch (IOException e) {
            return "its TCP connection failed: " + e.getMessage();
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
