package org.rdmapanama.bench.tcp;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The TCP benchmarks' server and client over the host's loopback (no RDMA device): every kind of run, messages
 * smaller and larger than a connection's buffer, the framing across partial reads, and the server's end.
 */
class TcpBenchTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private interface ClientRun {
        void run(TcpClient client) throws IOException;
    }

    /** A server on a thread of its own, then {@code run} on a client of C connections; the server must end OK. */
    private static void withServer(int connections, int outstanding, ClientRun run) throws Exception {
        try (TcpServer server = new TcpServer(LOOPBACK)) {
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
                try {
                    server.serve();
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            try (TcpClient client = new TcpClient(server.address(), LOOPBACK, connections, outstanding)) {
                run.run(client);
            }
            served.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void pingPongStampsEveryRoundTrip() throws Exception {
        withServer(1, 1, c -> {
            for (int size : new int[] {8, 64, 200_000}) {
                long[] stamps = c.pingPong(size, 20);
                assertEquals(20, stamps.length);
                for (int i = 1; i < stamps.length; i++) {
                    assertTrue(stamps[i] > stamps[i - 1], "ping " + i + " went after the reply to the one before");
                }
            }
        });
    }

    @Test
    void aStreamIsCountedByTheServer() throws Exception {
        withServer(1, 1, c -> {
            for (int size : new int[] {8, 1000, 300_000}) {
                long[] t = c.stream(size, 500);
                assertTrue(t[1] > t[0]);
            }
        });
    }

    @Test
    void requestsRunWOutstandingOnEveryConnection() throws Exception {
        withServer(3, 4, c -> {
            for (int size : new int[] {64, 70_000}) {
                long nanos = c.requests(size, 50);
                assertTrue(nanos > 0);
                assertEquals(150, c.latencies().count(), "a latency per request, on every connection");
                assertTrue(c.latencies().at(99) >= c.latencies().at(50));
            }
        });
    }

    @Test
    void aClientThatBreaksOffMidMessageFailsTheServer() throws Exception {
        try (TcpServer server = new TcpServer(LOOPBACK)) {
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
                try {
                    server.serve();
                } catch (IOException e) {
                    throw new IllegalStateException(e.getMessage(), e);
                }
            });
            try (SocketChannel ch = SocketChannel.open(server.address())) {
                ch.write(ByteBuffer.allocate(14).putInt(100).putLong(Frames.head(2)).flip()); // 100 announced, 10 sent
            }
            var e = assertThrows(Exception.class, () -> served.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("in the middle of a message"), e.getCause().getMessage());
        }
    }

    @Test
    void framesStreamThroughABufferSmallerThanTheMessage() throws IOException {
        Frames.Writer w = new Frames.Writer();
        assertTrue(w.add(40, Frames.head(1), 3));
        assertTrue(w.add(8, 77, 1));
        ByteBuffer wire = ByteBuffer.allocate(1000);
        ByteBuffer out = ByteBuffer.allocate(16); // a 40-byte message goes in three fills
        while (!w.idle() || out.position() > 0) {
            w.fill(out);
            out.flip();
            wire.put(out);
            out.compact();
        }
        assertEquals(3 * (4 + 40) + 4 + 8, wire.position());
        wire.flip();
        Frames.Reader r = new Frames.Reader();
        ByteBuffer in = ByteBuffer.allocate(16);
        int messages = 0;
        long last = 0;
        while (wire.hasRemaining()) {
            int n = Math.min(in.remaining(), Math.min(5, wire.remaining())); // partial reads of 5 bytes
            in.put(wire.slice(wire.position(), n));
            wire.position(wire.position() + n);
            in.flip();
            while (r.next(in)) {
                messages++;
                last = r.head();
                assertEquals(messages <= 3 ? 40 : 8, r.length());
            }
            in.compact();
        }
        assertEquals(4, messages);
        assertEquals(77, last);
        assertTrue(r.atBoundary());
    }

    @Test
    void aLengthOutOfRangeIsRefused() {
        ByteBuffer in = ByteBuffer.allocate(16).putInt(4).putLong(0).flip();
        var e = assertThrows(IOException.class, () -> new Frames.Reader().next(in));
        assertTrue(e.getMessage().contains("a message of 4 bytes"), e.getMessage());
    }
}
