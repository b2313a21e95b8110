package org.rdmapanama.bench.tcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.util.function.Consumer;

import static org.rdmapanama.bench.message.MessageBench.ECHO;
import static org.rdmapanama.bench.message.MessageBench.FIN;
import static org.rdmapanama.bench.message.MessageBench.SINK;

/**
 * The server of {@code tcp_lat}, {@code tcp_bw} and {@code tcp_rpc}, as a java.nio service is written: one
 * thread, one selector, non-blocking connections. It does what the channel benchmarks' server does: echoes an
 * {@code ECHO} with a message of its size, counts {@code SINK}s and answers a {@code FIN} with the count; it
 * ends when the last connection has closed at a message boundary, and fails when one breaks off.
 */
final class TcpServer implements AutoCloseable {
    private final Selector selector;
    private final ServerSocketChannel listener;
    private final Consumer<SelectionKey> onReady = this::ready;
    private int accepted;
    private int open;

    /** A connection's count of {@code SINK}s since its last {@code FIN}. */
    private static final class Sink {
        long count;
    }

    TcpServer(InetSocketAddress at) throws IOException {
        selector = Selector.open();
        boolean ok = false;
        try {
            listener = ServerSocketChannel.open();
            try {
                listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                listener.bind(at);
                listener.configureBlocking(false);
                listener.register(selector, SelectionKey.OP_ACCEPT);
                ok = true;
            } finally {
                if (!ok) {
                    listener.close();
                }
            }
        } finally {
            if (!ok) {
                selector.close();
            }
        }
    }

    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listener.getLocalAddress();
    }

    /** Serves until the connections that came have all closed. */
    void serve() throws IOException {
        try {
            while (accepted == 0 || open > 0) {
                selector.select(onReady);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private void ready(SelectionKey key) {
        try {
            if (key.isAcceptable()) {
                var ch = listener.accept();
                if (ch != null) {
                    new TcpConnection(ch, selector).state = new Sink();
                    accepted++;
                    open++;
                }
                return;
            }
            TcpConnection c = (TcpConnection) key.attachment();
            if (key.isReadable() && !c.read()) {
                boolean clean = c.reader.atBoundary() && c.in.position() == 0;
                c.close();
                open--;
                if (!clean) {
                    throw new IOException("a client closed its connection in the middle of a message");
                }
                return;
            }
            serve(c);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage() != null ? e.getMessage() : e.toString(), e);
        }
    }

    /** Takes every whole message the input holds while replies have room, then writes what it can. */
    private static void serve(TcpConnection c) throws IOException {
        Sink sink = (Sink) c.state;
        // Also when only writable: input left while the replies had no room is taken now.
        c.in.flip();
        while (c.writer.hasRoom() && c.reader.next(c.in)) {
            int op = Frames.op(c.reader.head());
            if (op == ECHO) {
                c.writer.add(c.reader.length(), Frames.head(ECHO), 1);
            } else if (op == SINK) {
                sink.count++;
            } else if (op == FIN) {
                c.writer.add(8, sink.count, 1);
                sink.count = 0;
            }
        }
        c.in.compact();
        c.flush(c.writer.hasRoom());
    }

    @Override
    public void close() throws IOException {
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof TcpConnection c) {
                c.close();
            }
        }
        try {
            listener.close();
        } finally {
            selector.close();
        }
    }
}
