package org.rdmapanama.bench.tcp;

import org.rdmapanama.bench.message.RequestLatencies;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

import static org.rdmapanama.bench.message.MessageBench.ECHO;
import static org.rdmapanama.bench.message.MessageBench.FIN;
import static org.rdmapanama.bench.message.MessageBench.SINK;

/**
 * The client of {@code tcp_lat}, {@code tcp_bw} and {@code tcp_rpc}: C connections driven by the calling
 * thread through one selector, as the channel client's loop thread drives its channels. A run issues its
 * messages and returns when the replies are in: {@link #pingPong} (one at a time on the first connection),
 * {@link #stream} (one-way, then a {@code FIN} that the server answers with its count) or {@link #requests}
 * (W outstanding on each connection, each latency recorded when its reply is whole). No allocation per message.
 */
final class TcpClient implements AutoCloseable {
    /** A run that gets no message for this long has lost its server. */
    private static final long STALL_NANOS = 30_000_000_000L;

    private enum Mode { PING_PONG, STREAM, REQUESTS }

    /** One connection's requests: issue times of the outstanding ones, in a ring (replies come in order). */
    private static final class Lane {
        final long[] issued;
        long sent;
        long received;

        Lane(int outstanding) {
            issued = new long[outstanding];
        }
    }

    private final Selector selector;
    private final TcpConnection[] connections;
    private final Consumer<SelectionKey> onReady = this::ready;
    private final int outstanding;
    private final RequestLatencies latencies = new RequestLatencies();
    private Mode mode;
    private int size;
    private long perConnection;
    private long[] stamps;
    private int running;
    private long start;
    private long end;
    private long lastMessage;

    /** Connects {@code count} connections from {@code local} (port 0) to {@code server}. */
    TcpClient(InetSocketAddress server, InetSocketAddress local, int count, int outstanding) throws IOException {
        this.outstanding = outstanding;
        selector = Selector.open();
        connections = new TcpConnection[count];
        boolean ok = false;
        try {
            for (int i = 0; i < count; i++) {
                SocketChannel ch = SocketChannel.open();
                try {
                    ch.bind(local);
                    ch.connect(server);
                } catch (IOException e) {
                    ch.close();
                    throw new IOException("cannot connect to " + server + " from " + local.getAddress() + ": "
                            + e.getMessage() + " (is the server running?)", e);
                }
                connections[i] = new TcpConnection(ch, selector);
                connections[i].state = new Lane(outstanding);
            }
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    RequestLatencies latencies() {
        return latencies;
    }

    /** {@code n} ping-pongs on the first connection; the times each ping was sent (perftest's post times). */
    long[] pingPong(int bytes, int n) throws IOException {
        begin(Mode.PING_PONG, bytes, n, 1);
        stamps = new long[n];
        TcpConnection c = connections[0];
        stamps[0] = start;
        issue(c, (Lane) c.state);
        c.flush(true);
        await();
        return stamps;
    }

    /** {@code n} one-way messages on the first connection, then the server's count; {first send, count received}. */
    long[] stream(int bytes, int n) throws IOException {
        begin(Mode.STREAM, bytes, n, 1);
        TcpConnection c = connections[0];
        c.writer.add(bytes, Frames.head(SINK), n);
        c.writer.add(8, Frames.head(FIN), 1);
        c.flush(true);
        await();
        return new long[] {start, end};
    }

    /** {@code n} requests on every connection, W outstanding on each; the nanoseconds from first issue to last reply. */
    long requests(int bytes, long n) throws IOException {
        begin(Mode.REQUESTS, bytes, n, connections.length);
        latencies.reset();
        for (TcpConnection c : connections) {
            Lane lane = (Lane) c.state;
            for (int i = 0; i < outstanding && lane.sent < n; i++) {
                issue(c, lane);
            }
            c.flush(true);
        }
        await();
        return end - start;
    }

    private void begin(Mode m, int bytes, long n, int lanes) {
        mode = m;
        size = bytes;
        perConnection = n;
        running = lanes;
        for (TcpConnection c : connections) {
            Lane lane = (Lane) c.state;
            lane.sent = 0;
            lane.received = 0;
        }
        start = System.nanoTime();
        lastMessage = start;
    }

    private void await() throws IOException {
        try {
            while (running > 0) {
                selector.select(onReady, 1000);
                if (running > 0 && System.nanoTime() - lastMessage > STALL_NANOS) {
                    throw new IOException("no message from the server for " + STALL_NANOS / 1_000_000_000L
                            + " s: is it a tcp_ benchmark of the same kind?");
                }
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private void issue(TcpConnection c, Lane lane) {
        lane.issued[(int) (lane.sent % lane.issued.length)] = System.nanoTime();
        c.writer.add(size, Frames.head(ECHO), 1);
        lane.sent++;
    }

    private void ready(SelectionKey key) {
        TcpConnection c = (TcpConnection) key.attachment();
        try {
            if (key.isReadable()) {
                if (!c.read()) {
                    throw new IOException("the server closed the connection");
                }
                c.in.flip();
                while (c.reader.next(c.in)) {
                    message(c, (Lane) c.state);
                }
                c.in.compact();
            }
            c.flush(true);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    private void message(TcpConnection c, Lane lane) {
        long now = System.nanoTime();
        lastMessage = now;
        switch (mode) {
            case PING_PONG -> {
                if (++lane.received < perConnection) {
                    stamps[(int) lane.received] = now;
                    issue(c, lane);
                } else {
                    running--;
                }
            }
            case STREAM -> {
                long counted = c.reader.head();
                if (c.reader.length() != 8 || counted != perConnection) {
                    throw new IllegalStateException("the server counted " + counted + " of " + perConnection
                            + " messages");
                }
                end = now;
                running--;
            }
            case REQUESTS -> {
                latencies.record(now - lane.issued[(int) (lane.received % outstanding)]);
                lane.received++;
                if (lane.sent < perConnection) {
                    issue(c, lane);
                } else if (lane.received == perConnection && --running == 0) {
                    end = now;
                }
            }
        }
    }

    /** Closes every connection (the server ends when the last has closed) and the selector. */
    @Override
    public void close() throws IOException {
        for (TcpConnection c : connections) {
            if (c != null) {
                c.close();
            }
        }
        selector.close();
    }
}
