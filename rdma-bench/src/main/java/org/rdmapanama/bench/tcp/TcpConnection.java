package org.rdmapanama.bench.tcp;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * One non-blocking TCP connection of a benchmark, owned by the one thread that runs its selector: direct
 * buffers of {@link #BUFFER} bytes each way, reused, a {@link Frames.Reader} and a {@link Frames.Writer}.
 */
final class TcpConnection {
    /** Each way; a larger message streams through. */
    static final int BUFFER = 64 << 10;

    final SocketChannel channel;
    final SelectionKey key;
    final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER);
    final ByteBuffer out = ByteBuffer.allocateDirect(BUFFER);
    final Frames.Reader reader = new Frames.Reader();
    final Frames.Writer writer = new Frames.Writer();
    /** What the owner keeps per connection. */
    Object state;

    TcpConnection(SocketChannel channel, Selector selector) throws IOException {
        this.channel = channel;
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.configureBlocking(false);
        this.key = channel.register(selector, SelectionKey.OP_READ, this);
    }

    /**
     * Reads what the socket has into {@link #in} (ready to put between takes: flip it, take the whole messages,
     * compact it); false at the peer's end of stream.
     */
    boolean read() throws IOException {
        return channel.read(in) >= 0;
    }

    /**
     * Writes what the writer has queued, as far as the socket takes it, and asks the selector for
     * writability while some is left (and for readability while {@code reading}).
     */
    void flush(boolean reading) throws IOException {
        while (true) {
            writer.fill(out);
            if (out.position() == 0) {
                break;
            }
            out.flip();
            int n = channel.write(out);
            out.compact();
            if (n == 0) {
                break;
            }
        }
        boolean pending = out.position() > 0 || !writer.idle();
        int ops = (reading ? SelectionKey.OP_READ : 0) | (pending ? SelectionKey.OP_WRITE : 0);
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    void close() {
        key.cancel();
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing: nothing is left to tell
        }
    }
}
