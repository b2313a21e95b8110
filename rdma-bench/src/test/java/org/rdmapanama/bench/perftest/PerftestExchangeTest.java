package org.rdmapanama.bench.perftest;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * perftest 4.5's TCP exchange without a device: the messages against bytes
 * captured (strace) between two native ib_write_lat in the lab, and two
 * {@link PerftestExchange} ends over loopback TCP.
 */
class PerftestExchangeTest {
    /** ib_write_lat 4.5-0.17 client on rxe0 -x 1, as written to its socket. */
    static final String NATIVE_KEYS = "0000:0001:000012:c7bbde:00000398:0000564d9608e000:"
            + "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:01:00000000:";
    static final byte[] GID = HexFormat.of().parseHex("00000000000000000000ffff0a4d0001");

    @Test
    void keysMatchNativeBytes() {
        PerftestKeys k = new PerftestKeys(0, 1, 0x12, 0xc7bbde, 0x398, 0x564d9608e000L, GID, 0);
        byte[] msg = k.encode();
        assertEquals(108, msg.length);
        assertEquals(NATIVE_KEYS, new String(msg, 0, NATIVE_KEYS.length(), StandardCharsets.US_ASCII));
        for (int i = NATIVE_KEYS.length(); i < msg.length; i++) {
            assertEquals(0, msg[i], "NUL padding at " + i);
        }
        PerftestKeys back = PerftestKeys.decode(msg, true);
        assertEquals(0x12, back.qpn());
        assertEquals(0xc7bbde, back.psn());
        assertEquals(0x398, back.rkey());
        assertEquals(0x564d9608e000L, back.vaddr());
        assertEquals(1, back.outReads());
        assertArrayEquals(GID, back.gid());
    }

    @Test
    void keysWithoutGidAre59Bytes() {
        PerftestKeys k = new PerftestKeys(0x1a, 16, 0xabcdef, 0x123456, 0xfedcba98, 0x7f0000001000L, null, 0);
        byte[] msg = k.encode();
        assertEquals(59, msg.length);
        assertEquals("001a:0010:abcdef:123456:fedcba98:00007f0000001000:00000000",
                new String(msg, 0, 58, StandardCharsets.US_ASCII));
        PerftestKeys back = PerftestKeys.decode(msg, false);
        assertEquals(0xfedcba98, back.rkey());
        assertEquals(0x1a, back.lid());
        assertNull(back.gid());
    }

    @Test
    void keysOfTheOtherFormAreRefused() {
        byte[] noGid = new PerftestKeys(1, 1, 1, 1, 1, 1, null, 0).encode();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PerftestKeys.decode(noGid, true));
        assertTrue(e.getMessage().startsWith("Couldn't parse line <"), e.getMessage());
        byte[] junk = "PT\u0002garbage".getBytes(StandardCharsets.US_ASCII);
        assertThrows(IllegalArgumentException.class, () -> PerftestKeys.decode(junk, false));
    }

    @Test
    void structKeysAreBigEndianAtPerftestsOffsets() {
        PerftestKeys k = new PerftestKeys(0, 16, 0x12, 0xc7bbde, 0x398, 0x564d9608e000L, GID, 0);
        byte[] msg = k.encodeStruct(1);
        assertEquals(56, msg.length, "sizeof(struct pingpong_dest)");
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(msg);
        assertEquals(16, b.getInt(4));
        assertEquals(0x12, b.getInt(8));
        assertEquals(0xc7bbde, b.getInt(12));
        assertEquals(0x398, b.getInt(16));
        assertEquals(0x564d9608e000L, b.getLong(24), "vaddr after 4 bytes of padding");
        assertArrayEquals(GID, java.util.Arrays.copyOfRange(msg, 32, 48));
        assertEquals(1, b.getInt(52), "gid_index");
        PerftestKeys back = PerftestKeys.decodeStruct(msg);
        assertEquals(0x564d9608e000L, back.vaddr());
        assertEquals(0x398, back.rkey());
        assertArrayEquals(GID, back.gid());
        assertThrows(IllegalArgumentException.class, () -> PerftestKeys.decodeStruct(new byte[16]));
    }

    @Test
    void gidTypesMustMatch() {
        byte[] linkLocal = HexFormat.of().parseHex("fe800000000000000cffedfffe128531");
        assertTrue(PerftestKeys.sameGidType(GID, GID));
        assertFalse(PerftestKeys.sameGidType(GID, linkLocal));
    }

    @Test
    void versionBlockIsNativeForPerftestAndTaggedForUs() {
        byte[] ours = PerftestExchange.encodeVersion(PerftestWire.VERSION);
        assertEquals(16, ours.length);
        assertEquals("6.06", new String(ours, 0, 4, StandardCharsets.US_ASCII));
        assertEquals(0, ours[4], "perftest's atof stops at the NUL");
        PerftestExchange.Hello h = PerftestExchange.decodeVersion(ours);
        assertTrue(h.java());
        assertEquals(PerftestWire.VERSION, h.protocol());

        byte[] perftest = new byte[16];
        System.arraycopy("6.06".getBytes(StandardCharsets.US_ASCII), 0, perftest, 0, 4); // as captured
        h = PerftestExchange.decodeVersion(perftest);
        assertFalse(h.java());
        assertEquals("6.06", h.version());
    }

    @Test
    void oldPeersGetPerftestsComplaint() {
        byte[] old = new byte[16];
        System.arraycopy("5.60".getBytes(StandardCharsets.US_ASCII), 0, old, 0, 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PerftestExchange.decodeVersion(old));
        assertTrue(e.getMessage().startsWith("Current implementation is not compatible with versions older than 5.70"));
        byte[] oldJava = new PerftestWire(0, 0, 1, 2, 1000, 4096).encode();
        e = assertThrows(IllegalArgumentException.class,
                () -> PerftestExchange.decodeVersion(java.util.Arrays.copyOf(oldJava, 16)));
        assertTrue(e.getMessage().contains("rdma-bench from before"), e.getMessage());
    }

    @Test
    void mtuIsTheSmallerValidOne() {
        assertArrayEquals(new byte[] {'3', 0}, PerftestExchange.encodeMtu(3));
        assertEquals(3, PerftestExchange.agreeMtu(5, new byte[] {'3', 0}));
        assertEquals(3, PerftestExchange.agreeMtu(3, new byte[] {'5', 0}));
        assertEquals(4, PerftestExchange.agreeMtu(4, new byte[] {'9', 0}), "an invalid MTU leaves ours");
    }

    @Test
    void twoEndsRunTheWholeExchangeOverTcp() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        Duration t = Duration.ofSeconds(10);
        PerftestKeys serverKeys = new PerftestKeys(0, 1, 0x11, 0xd43458, 0x227, 0x55a87c880000L, GID, 0);
        PerftestKeys clientKeys = new PerftestKeys(0, 1, 0x12, 0xc7bbde, 0x398, 0x564d9608e000L, GID, 0);
        PerftestStats.Bandwidth figures = new PerftestStats.Bandwidth(65536, 500, 44.81, 42.66, 0.000683);
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream());
        int finalPort = port;
        ServerSocketChannel listening = PerftestTcpExchange.listen(port);
        CompletableFuture<Object[]> server = CompletableFuture.supplyAsync(() -> {
            try (PerftestExchange x = PerftestTcpExchange.accept(listening, finalPort, t, quiet)) {
                PerftestExchange.Hello h = x.hello(PerftestWire.VERSION, t);
                int[] sys = x.sysData(4096, 64, t);
                int mtu = x.mtu(5, t);
                PerftestKeys got = x.handshake(serverKeys, t);
                x.handshake(serverKeys, t);
                PerftestStats.Bandwidth rep = x.report(new PerftestStats.Bandwidth(0, 0, 0, 0, 0), t);
                x.closeConnection(serverKeys, t);
                return new Object[] {h, sys, mtu, got, rep};
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        PerftestExchange c = null;
        for (int i = 0; i < 100 && c == null; i++) {
            try {
                c = PerftestTcpExchange.connect("127.0.0.1", port, t);
            } catch (IOException e) {
                Thread.sleep(20); // the server thread is not listening yet
            }
        }
        try (PerftestExchange x = c) {
            assertTrue(x.hello(PerftestWire.VERSION, t).java());
            assertArrayEquals(new int[] {65536, 128}, x.sysData(65536, 128, t), "both take the larger");
            assertEquals(3, x.mtu(3, t));
            assertEquals(0x11, x.handshake(clientKeys, t).qpn());
            x.handshake(clientKeys, t);
            x.report(figures, t);
            x.closeConnection(clientKeys, t);
        }
        Object[] r = server.get();
        assertArrayEquals(new int[] {65536, 128}, (int[]) r[1]);
        assertEquals(3, r[2]);
        assertEquals(0x12, ((PerftestKeys) r[3]).qpn());
        assertEquals(figures, r[4]);
    }

    @Test
    void aPeerThatLeavesMidExchangeIsAnErrorNotAHang() throws Exception {
        try (ServerSocket ss = new ServerSocket(0)) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (var s = ss.accept()) {
                    s.getOutputStream().write(new byte[] {'6', '.'}); // 2 of 16 bytes, then gone
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            try (PerftestExchange x = PerftestTcpExchange.connect("127.0.0.1", ss.getLocalPort(), Duration.ofSeconds(5))) {
                IOException e = assertThrows(IOException.class, () -> x.hello(PerftestWire.VERSION, Duration.ofSeconds(5)));
                assertTrue(e.getMessage().contains("closed the setup connection after 2 of 16 bytes"), e.getMessage());
            }
            peer.get();
        }
    }
}
