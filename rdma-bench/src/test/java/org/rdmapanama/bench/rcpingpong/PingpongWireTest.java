package org.rdmapanama.bench.rcpingpong;

import org.junit.jupiter.api.Test;
import org.rdmapanama.verbs.QpAddress;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ibv_rc_pingpong address message and the TCP exchange, on loopback (no device). */
class PingpongWireTest {
    static final byte[] GID = HexFormat.of().parseHex("00000000000000000000ffff0a4d0001");

    @Test
    void encodesLikeIbvRcPingpong() {
        byte[] msg = PingpongWire.encode(new QpAddress(0x12, 0x11, 0xc863e1, GID));
        assertEquals(52, msg.length);
        assertEquals("0012:000011:c863e1:00000000000000000000ffff0a4d0001",
                new String(msg, 0, 51, StandardCharsets.US_ASCII));
        assertEquals(0, msg[51]);
    }

    @Test
    void roundTrips() throws Exception {
        QpAddress a = new QpAddress(0xffff, 0xabcdef, 0x123456, GID);
        assertEquals(a, PingpongWire.decode(PingpongWire.encode(a), 52));
    }

    @Test
    void malformedMessagesAreClearErrors() {
        byte[] good = PingpongWire.encode(new QpAddress(1, 2, 3, GID));
        MalformedPeerMessageException e = assertThrows(MalformedPeerMessageException.class,
                () -> PingpongWire.decode(good, 20));
        assertTrue(e.getMessage().contains("has 20 bytes, expected 52"), e.getMessage());
        e = assertThrows(MalformedPeerMessageException.class, () -> PingpongWire.decode(new byte[60], 60));
        assertTrue(e.getMessage().contains("has 60 bytes, expected 52"), e.getMessage());

        byte[] bad = good.clone();
        bad[4] = ';';
        e = assertThrows(MalformedPeerMessageException.class, () -> PingpongWire.decode(bad, 52));
        assertTrue(e.getMessage().contains("is not LLLL:QQQQQQ:PPPPPP"), e.getMessage());
        assertTrue(e.getMessage().contains("\"0001;000002"), e.getMessage());

        byte[] noNul = good.clone();
        noNul[51] = 'x';
        e = assertThrows(MalformedPeerMessageException.class, () -> PingpongWire.decode(noNul, 52));
        assertTrue(e.getMessage().contains("not NUL-terminated"), e.getMessage());

        byte[] binary = new byte[52];
        binary[0] = (byte) 0xff;
        e = assertThrows(MalformedPeerMessageException.class, () -> PingpongWire.decode(binary, 52));
        assertTrue(e.getMessage().contains("\\xff"), e.getMessage());
    }

    @Test
    void clientAndServerExchangeOverTcp() throws Exception {
        QpAddress serverAddr = new QpAddress(7, 0x100, 0x200, GID);
        QpAddress clientAddr = new QpAddress(8, 0x101, 0x201, new byte[16]);
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<QpAddress> server = CompletableFuture.supplyAsync(() -> {
                try {
                    return OutOfBand.server(listener, serverAddr, remote -> { }, Duration.ofSeconds(10));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            QpAddress got = OutOfBand.client(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    listener.getLocalPort()), clientAddr, Duration.ofSeconds(10));
            assertEquals(serverAddr, got);
            assertEquals(clientAddr, server.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aShortOrSilentPeerIsAnErrorNotAHang() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture.runAsync(() -> {
                try (Socket s = fake.accept(); OutputStream out = s.getOutputStream()) {
                    out.write("0000:000011:".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException ignored) {
                    // the client's error is what is tested
                }
            });
            MalformedPeerMessageException e = assertThrows(MalformedPeerMessageException.class,
                    () -> OutOfBand.client(new InetSocketAddress(InetAddress.getLoopbackAddress(), fake.getLocalPort()),
                            new QpAddress(1, 1, 1, GID), Duration.ofSeconds(10)));
            assertTrue(e.getMessage().contains("has 12 bytes, expected 52"), e.getMessage());
        }
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            long start = System.nanoTime();
            Exception e = assertThrows(Exception.class,
                    () -> OutOfBand.client(new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort()),
                            new QpAddress(1, 1, 1, GID), Duration.ofMillis(500)));
            assertTrue(e.getMessage().contains("timed out"), e.getMessage());
            assertTrue(System.nanoTime() - start < 5_000_000_000L);
        }
    }
}
