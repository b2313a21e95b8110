package org.rdmapanama.bench.perftest;

import org.rdmapanama.error.RdmaException;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * perftest's exchange over TCP (no {@code -R}), kept open for the whole run.
 * The channel is non-blocking: reads wait with a deadline, and
 * {@link #peerGone()} (the run's peer watch) stashes bytes that arrive early
 * (a native read_lat server sends its last handshake as soon as the run
 * starts) for the next read, so the watch never eats the protocol.
 */
final class PerftestTcpExchange extends PerftestExchange {
    private static final long PARK_NANOS = Duration.ofMillis(1).toNanos();

    private final SocketChannel ch;
    private final String peerName;
    private ByteBuffer stash = ByteBuffer.allocate(256).flip();
    private boolean eof;

    private PerftestTcpExchange(SocketChannel ch, boolean client, String peerName) throws IOException {
        super(client);
        this.ch = ch;
        this.peerName = peerName;
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(false);
    }

    /**
     * Listens on {@code port}. A server listens before it opens its device, as
     * the kernel then queues a client that connects meanwhile instead of
     * refusing it (opening a device links most of the verbs a run uses: under
     * emulation, seconds); {@link #accept} takes it once the device is ready.
     */
    static ServerSocketChannel listen(int port) throws IOException {
        ServerSocketChannel ssc = ServerSocketChannel.open();
        try {
            ssc.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ssc.bind(new InetSocketAddress(port));
            return ssc;
        } catch (IOException | RuntimeException e) {
            ssc.close();
            throw e;
        }
    }

    /** Prints the waiting banner and accepts one client on {@code listening}, which it then closes. */
    static PerftestTcpExchange accept(ServerSocketChannel listening, int port, Duration timeout, PrintStream out)
            throws IOException {
        try (ServerSocketChannel ssc = listening) {
            ssc.socket().setSoTimeout((int) timeout.toMillis());
            PerftestHeader.waiting(out);
            SocketChannel ch = ssc.socket().accept().getChannel();
            try {
                return new PerftestTcpExchange(ch, false, "client");
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        } catch (SocketTimeoutException e) {
            throw new RdmaException("no client connected to TCP port " + port + " within " + timeout.toSeconds() + " s", e);
        }
    }

    static PerftestTcpExchange connect(String host, int port, Duration timeout) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.socket().connect(new InetSocketAddress(InetAddress.getByName(host), port), (int) timeout.toMillis());
            return new PerftestTcpExchange(ch, true, "server");
        } catch (ConnectException e) {
            ch.close();
            throw new RdmaException("Couldn't connect to " + host + ":" + port + " (" + e.getMessage()
                    + "): is the server running?", e);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    @Override
    byte[] encodeKeys(PerftestKeys mine) {
        return mine.encode();
    }

    @Override
    PerftestKeys decodeKeys(byte[] msg, PerftestKeys mine) {
        return PerftestKeys.decode(msg, mine.gid() != null);
    }

    @Override
    boolean writesDone() {
        return true;
    }

    @Override
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

    @Override
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
    @Override
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
