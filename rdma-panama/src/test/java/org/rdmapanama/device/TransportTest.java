package org.rdmapanama.device;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TransportTest {
    @Test
    void parsesTheUsualSpellings() {
        assertEquals(Transport.IWARP, Transport.parse("iwarp"));
        assertEquals(Transport.IWARP, Transport.parse(" iWARP "));
        assertEquals(Transport.ROCE_V2, Transport.parse("RoCEv2"));
        assertEquals(Transport.ROCE_V2, Transport.parse("roce"));
        assertEquals(Transport.ROCE_V2, Transport.parse("roce-v2"));
        assertEquals(Transport.ROCE_V1, Transport.parse("ROCE_V1"));
        assertEquals(Transport.INFINIBAND, Transport.parse("ib"));
        assertEquals(Transport.INFINIBAND, Transport.parse("InfiniBand"));
    }

    @Test
    void anUnknownTransportNamesItselfAndTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Transport.parse("omnipath"));
        assertTrue(e.getMessage().contains("'omnipath'"), e.getMessage());
        assertTrue(e.getMessage().contains("iwarp") && e.getMessage().contains("rocev2"), e.getMessage());
    }

    private static Gid gid(int index, GidType type) {
        byte[] raw = new byte[16];
        raw[0] = (byte) 0xfe;
        raw[1] = (byte) 0x80;
        return new Gid(index, raw, type, 0);
    }

    @Test
    void classificationUsesTransportTypeThenLinkLayerThenGidTypes() {
        // An iWARP device is iWARP whatever its link layer and GIDs say.
        assertEquals(Transport.IWARP, Port.classify(true, LinkLayer.ETHERNET, List.of(gid(0, GidType.IB))));
        // IB transport on an IB link: InfiniBand (LID addressing).
        assertEquals(Transport.INFINIBAND, Port.classify(false, LinkLayer.INFINIBAND, List.of(gid(0, GidType.IB))));
        // Old providers report no link layer; that means InfiniBand.
        assertEquals(Transport.INFINIBAND, Port.classify(false, LinkLayer.UNSPECIFIED, List.of()));
        // Ethernet with a RoCEv2 GID anywhere in the table: RoCEv2 (mlx5 has v1 and v2 pairs).
        assertEquals(Transport.ROCE_V2, Port.classify(false, LinkLayer.ETHERNET,
                List.of(gid(0, GidType.ROCE_V1), gid(1, GidType.ROCE_V2))));
        assertEquals(Transport.ROCE_V1, Port.classify(false, LinkLayer.ETHERNET, List.of(gid(0, GidType.ROCE_V1))));
    }

    @Test
    void mtuEnumToBytes() {
        assertEquals(256, Port.mtuBytes(1));
        assertEquals(1024, Port.mtuBytes(3));
        assertEquals(4096, Port.mtuBytes(5));
        assertEquals(0, Port.mtuBytes(0));
        assertEquals(0, Port.mtuBytes(6));
    }

    @Test
    void whatEachTransportCanDo() {
        for (Transport t : Transport.values()) {
            boolean iwarp = t == Transport.IWARP;
            assertEquals(!iwarp, t.supportsUd(), t + " UD");
            assertEquals(!iwarp, t.supportsImmediateData(), t + " immediate data");
            assertEquals(iwarp ? 512 : 56, t.maxConnectPrivateData(), t + " connect private data");
            assertEquals(iwarp ? 512 : 196, t.maxAcceptPrivateData(), t + " accept private data");
        }
    }

    @Test
    void atomicsAndReadSgesComeFromTheAttributes() {
        DeviceCapabilities siw = caps(AtomicCapability.NONE, 1);
        DeviceCapabilities rxe = caps(AtomicCapability.HCA, 32);
        assertFalse(siw.supportsAtomics());
        assertTrue(rxe.supportsAtomics());
        assertTrue(caps(AtomicCapability.GLOBAL, 1).supportsAtomics());
        assertTrue(siw.allowsReadSges(1));
        assertFalse(siw.allowsReadSges(2));
        assertTrue(rxe.allowsReadSges(32));
        assertFalse(rxe.allowsReadSges(33));
    }

    private static DeviceCapabilities caps(AtomicCapability atomics, int maxSgeRd) {
        return new DeviceCapabilities("0.0.0", 0, 0, 0, 1L << 40, 1, 1, 32, maxSgeRd, 1, 1, 1, 1, 1, 1, atomics,
                0, 0, 0, 0, 1);
    }
}
