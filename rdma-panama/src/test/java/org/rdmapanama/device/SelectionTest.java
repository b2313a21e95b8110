package org.rdmapanama.device;

import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.testkit.TestGids;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transport, device, port and GID selection on device descriptions shaped
 * like rxe, siw, a RoCE mlx5 and an InfiniBand HCA. The InfiniBand path is
 * tested here only: no InfiniBand hardware was available.
 */
class SelectionTest {
    static Gid gid(int index, GidType type, boolean ipv4) {
        return TestGids.gid(index, type, ipv4, 3);
    }

    static RdmaDevice device(String name, Transport t, LinkLayer link, PortState state, int lid, List<Gid> gids) {
        Port p = new Port(1, state, link, t, lid, 1024, 4096, 256, gids);
        return new RdmaDevice(name, 1, "x", t, null, List.of(p));
    }

    static final RdmaDevice RXE = device("rxe0", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.ACTIVE, 0,
            List.of(gid(0, GidType.ROCE_V2, false), gid(1, GidType.ROCE_V2, true)));
    static final RdmaDevice SIW = device("siw0", Transport.IWARP, LinkLayer.ETHERNET, PortState.ACTIVE, 0,
            List.of(gid(0, GidType.IB, false)));
    // mlx5 lists a v1 and a v2 entry per address: the IPv4 RoCEv2 GID is index 3.
    static final RdmaDevice MLX_ROCE = device("mlx5_0", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.ACTIVE, 0,
            List.of(gid(0, GidType.ROCE_V1, false), gid(1, GidType.ROCE_V2, false),
                    gid(2, GidType.ROCE_V1, true), gid(3, GidType.ROCE_V2, true)));
    static final RdmaDevice MLX_IB = device("mlx5_1", Transport.INFINIBAND, LinkLayer.INFINIBAND, PortState.ACTIVE, 0x17,
            List.of(gid(0, GidType.IB, false)));
    static final RdmaDevice DOWN = device("mlx5_2", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.DOWN, 0,
            List.of(gid(0, GidType.ROCE_V2, true)));
    static final List<RdmaDevice> ALL = List.of(DOWN, RXE, SIW, MLX_ROCE, MLX_IB);

    @Test
    void transportIwarpPicksSiw() throws Exception {
        Selection s = Selection.select(RdmaConfig.any().withTransport("iwarp"), ALL);
        assertEquals("siw0", s.device().name());
        assertEquals(Transport.IWARP, s.transport());
    }

    @Test
    void deviceRxePicksItsRoceV2Ipv4GidByType() throws Exception {
        Selection s = Selection.select(RdmaConfig.any().withDevice("rxe0"), ALL);
        assertEquals(1, s.gidIndex());
        assertEquals(Transport.ROCE_V2, s.transport());
    }

    @Test
    void onMlx5TheRoceV2Ipv4GidIsIndex3() throws Exception {
        assertEquals(3, Selection.select(RdmaConfig.any().withDevice("mlx5_0"), ALL).gidIndex());
        assertEquals(1, Selection.select(RdmaConfig.any().withDevice("mlx5_0").withGid("auto-ipv6"), ALL).gidIndex());
        Selection v1 = Selection.select(RdmaConfig.any().withDevice("mlx5_0").withTransport("rocev1"), ALL);
        assertEquals(2, v1.gidIndex());
        assertEquals(Transport.ROCE_V1, v1.transport());
        assertEquals(0, Selection.select(RdmaConfig.any().withDevice("mlx5_0").withGid("0"), ALL).gidIndex());
    }

    @Test
    void infinibandUsesLidAndNoGrh() throws Exception {
        Selection s = Selection.select(RdmaConfig.any().withTransport("ib"), ALL);
        assertEquals("mlx5_1", s.device().name());
        assertTrue(s.usesLid());
        assertEquals(-1, s.gidIndex(), "no GRH within an IB subnet");
        assertNull(s.gid());
        assertEquals(0x17, s.port().lid());
    }

    @Test
    void firstActivePortWins() throws Exception {
        assertEquals("rxe0", Selection.select(RdmaConfig.any(), ALL).device().name());
    }

    @Test
    void errorsNameWhatWasAskedAndWhyEachDeviceWasRejected() {
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class,
                () -> Selection.select(RdmaConfig.any().withTransport("iwarp").withDevice("rxe0"), ALL));
        String m = e.getMessage();
        assertTrue(m.contains("transport=iWARP device=rxe0"), m);
        assertTrue(m.contains("rxe0 (RoCEv2): port 1 is RoCEv2, not iWARP"), m);
        assertTrue(m.contains("siw0 (iWARP): not the device asked for"), m);
        assertTrue(m.contains("mlx5_1 (InfiniBand)"), m);

        m = assertThrows(NoSuchDeviceException.class,
                () -> Selection.select(RdmaConfig.any().withDevice("mlx5_2"), ALL)).getMessage();
        assertTrue(m.contains("mlx5_2 (RoCEv2): port 1 is DOWN, not ACTIVE"), m);

        m = assertThrows(NoSuchDeviceException.class,
                () -> Selection.select(RdmaConfig.any().withDevice("rxe0").withGid("7"), ALL)).getMessage();
        assertTrue(m.contains("no valid GID at index 7"), m);

        m = assertThrows(NoSuchDeviceException.class,
                () -> Selection.select(RdmaConfig.any().withDevice("rxe0").withPort(2), ALL)).getMessage();
        assertTrue(m.contains("has no port 2"), m);

        m = assertThrows(NoSuchDeviceException.class, () -> Selection.select(RdmaConfig.any(), List.of())).getMessage();
        assertTrue(m.contains("there are no RDMA devices"), m);
    }

    @Test
    void configPrecedenceIsSystemPropertyThenEnvironmentThenFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rdma.properties");
        Files.writeString(file, "transport=rocev2\ndevice=from-file\nport=1\nrdma.gid=3\n");
        Properties props = new Properties();
        props.setProperty("rdma.config", file.toString());
        props.setProperty("rdma.transport", "iwarp");
        Map<String, String> env = Map.of("RDMA_TRANSPORT", "ib", "RDMA_DEVICE", "from-env");

        RdmaConfig c = RdmaConfig.load(props, env);
        assertEquals(Transport.IWARP, c.transport().orElseThrow());
        assertEquals("from-env", c.device().orElseThrow());
        assertEquals(1, c.port().orElseThrow());
        assertEquals("3", c.gid());
        assertEquals("system property rdma.transport", c.origins().get("transport"));
        assertEquals("environment variable RDMA_DEVICE", c.origins().get("device"));
        assertEquals("config file " + file, c.origins().get("port"));

        RdmaConfig none = RdmaConfig.load(new Properties(), Map.of());
        assertTrue(none.transport().isEmpty() && none.device().isEmpty());
        assertEquals("auto", none.gid());
    }

    @Test
    void badValuesNameTheKeyAndWhereTheyCameFrom() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaConfig.load(new Properties(), Map.of("RDMA_TRANSPORT", "carrier-pigeon")));
        assertTrue(e.getMessage().contains("'carrier-pigeon'") && e.getMessage().contains("RDMA_TRANSPORT"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> RdmaConfig.load(new Properties(), Map.of("RDMA_PORT", "one")));
        assertTrue(e.getMessage().contains("port must be a number"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> RdmaConfig.load(new Properties(), Map.of("RDMA_GID", "-2")));
        assertTrue(e.getMessage().contains("gid must be"), e.getMessage());
        Properties p = new Properties();
        p.setProperty("rdma.config", "/nonexistent/rdma.properties");
        e = assertThrows(IllegalArgumentException.class, () -> RdmaConfig.load(p, Map.of()));
        assertTrue(e.getMessage().contains("cannot read the RDMA config file"), e.getMessage());
    }
}
