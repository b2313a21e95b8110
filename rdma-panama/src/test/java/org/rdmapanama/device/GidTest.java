package org.rdmapanama.device;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GidTest {
    @Test
    void ipv4MappedGid() {
        byte[] raw = new byte[16];
        raw[10] = (byte) 0xff;
        raw[11] = (byte) 0xff;
        raw[12] = 10;
        raw[13] = 77;
        raw[15] = 1;
        Gid g = new Gid(1, raw, GidType.ROCE_V2, 3);
        assertTrue(g.isIpv4());
        assertEquals("10.77.0.1", g.address().getHostAddress());
        assertEquals("0000:0000:0000:0000:0000:ffff:0a4d:0001", g.hex());
        assertEquals("gid[1] ::ffff:10.77.0.1 RoCEv2", g.toString());
    }

    @Test
    void linkLocalGid() {
        byte[] raw = {(byte) 0xfe, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, (byte) 0xff, (byte) 0xfe, 0x12, 0x34, 0x56};
        Gid g = new Gid(0, raw, GidType.ROCE_V2, 3);
        assertFalse(g.isIpv4());
        assertEquals("fe80:0000:0000:0000:5054:00ff:fe12:3456", g.hex());
        assertEquals("fe80:0:0:0:5054:ff:fe12:3456", g.address().getHostAddress());
        assertEquals("fe80::5054:ff:fe12:3456", g.text());
        byte[] one = new byte[16];
        one[15] = 1;
        assertEquals("::1", new Gid(0, one, GidType.IB, 0).text());
        byte[] mid = new byte[16];
        mid[0] = 0x20;
        mid[1] = 0x01;
        mid[15] = 5;
        mid[7] = 3;
        assertEquals("2001:0:0:3::5", new Gid(0, mid, GidType.IB, 0).text());
    }

    @Test
    void rawIsCopiedBothWays() {
        byte[] raw = new byte[16];
        Gid g = new Gid(0, raw, GidType.IB, 0);
        raw[0] = 1;
        assertEquals(0, g.raw()[0]);
        g.raw()[0] = 1;
        assertEquals(0, g.raw()[0]);
    }

    @Test
    void wrongLengthIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Gid(0, new byte[4], GidType.IB, 0));
        assertTrue(e.getMessage().contains("16 bytes"));
    }

    @Test
    void guidText() {
        RdmaDevice d = new RdmaDevice("rxe0", 0x505400fffe123456L, "InfiniBand channel adapter",
                Transport.ROCE_V2, null, java.util.List.of());
        assertEquals("5054:00ff:fe12:3456", d.nodeGuidText());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.port(1));
        assertTrue(e.getMessage().contains("rxe0 has no port 1"), e.getMessage());
    }
}
