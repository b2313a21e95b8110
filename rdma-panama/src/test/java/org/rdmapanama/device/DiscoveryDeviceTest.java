package org.rdmapanama.device;

import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Device discovery on real devices, checked against rdma-core's own
 * {@code ibv_devinfo -v}. Runs in the lab (scripts/test), where rxe0 and
 * siw0 exist; on a machine with RDMA NICs it checks those.
 */
@Tag("device")
class DiscoveryDeviceTest {
    record NativePort(String state, int activeMtu, String linkLayer, Map<Integer, String> gids) {}

    record NativeDevice(String transport, String nodeGuid, String atomicCap, List<NativePort> ports) {}

    static List<RdmaDevice> devices;
    static Map<String, NativeDevice> devinfo;

    @BeforeAll
    static void discover() throws Exception {
        devices = RdmaDevices.require();
        devinfo = parseDevinfo(run("ibv_devinfo", "-v"));
    }

    @Test
    void javaSeesTheSameDevicesAsIbvDevinfo() {
        assertEquals(devinfo.keySet(), devices.stream().map(RdmaDevice::name).collect(java.util.stream.Collectors.toSet()));
    }

    @Test
    void guidsPortsMtusAndLinkLayersMatchIbvDevinfo() {
        for (RdmaDevice d : devices) {
            NativeDevice n = devinfo.get(d.name());
            assertEquals(n.nodeGuid(), d.nodeGuidText(), d.name() + " node_guid");
            assertEquals(n.ports().size(), d.ports().size(), d.name() + " port count");
            for (Port p : d.ports()) {
                NativePort np = n.ports().get(p.number() - 1);
                assertEquals(np.state(), "PORT_" + p.state(), d.name() + " port state");
                assertEquals(np.activeMtu(), p.activeMtu(), d.name() + " active_mtu");
                assertEquals(np.linkLayer(), p.linkLayer().toString(), d.name() + " link_layer");
            }
            assertEquals(n.atomicCap(), switch (d.capabilities().atomicCap()) {
                case NONE -> "ATOMIC_NONE";
                case HCA -> "ATOMIC_HCA";
                case GLOBAL -> "ATOMIC_GLOB";
            }, d.name() + " atomic_cap");
        }
    }

    @Test
    void gidTablesMatchIbvDevinfo() throws Exception {
        for (RdmaDevice d : devices) {
            if (d.transport() == Transport.IWARP) {
                // ibv_devinfo prints no GID table for iWARP ports; ours holds the
                // MAC-derived GID the provider reports, which iWARP does not route by.
                continue;
            }
            for (Port p : d.ports()) {
                Map<Integer, String> nativeGids = devinfo.get(d.name()).ports().get(p.number() - 1).gids();
                Map<Integer, String> javaGids = new LinkedHashMap<>();
                for (Gid g : p.gids()) {
                    javaGids.put(g.index(), g.address().getHostAddress() + typeSuffix(g.type()));
                }
                Map<Integer, String> nativeNormalized = new LinkedHashMap<>();
                for (var e : nativeGids.entrySet()) {
                    String[] parts = e.getValue().split(",\\s*", 2);
                    String type = parts.length > 1 ? parts[1].trim() : "";
                    nativeNormalized.put(e.getKey(), InetAddress.getByName(parts[0].trim()).getHostAddress()
                            + (type.isEmpty() ? "" : " " + type));
                }
                assertEquals(nativeNormalized, javaGids, d.name() + " port " + p.number() + " GIDs");
            }
        }
    }

    /** ibv_devinfo prints a type only for RoCE GIDs. */
    private static String typeSuffix(GidType t) {
        return switch (t) {
            case ROCE_V1 -> " RoCE v1";
            case ROCE_V2 -> " RoCE v2";
            default -> "";
        };
    }

    @Test
    void transportsAreClassifiedFromTheDevice() {
        for (RdmaDevice d : devices) {
            String nativeTransport = devinfo.get(d.name()).transport();
            if (nativeTransport.startsWith("iWARP")) {
                assertEquals(Transport.IWARP, d.transport(), d.name());
            } else {
                assertTrue(nativeTransport.startsWith("InfiniBand"), nativeTransport);
                assertTrue(d.transport() != Transport.IWARP, d.name());
            }
        }
    }

    /** The lab's two transports, each found by selection: RoCEv2 with a RoCEv2 GID for its address, iWARP without atomics. */
    @Test
    void theLabHasSoftRoceAndSoftIwarp() throws Exception {
        assumeTrue("1".equals(System.getenv("RDMA_LAB")), "only in the soft-RDMA lab");
        Selection roce = LabDevices.select(Transport.ROCE_V2);
        assertEquals(Transport.ROCE_V2, roce.device().transport());
        Port p = roce.port();
        assertEquals(PortState.ACTIVE, p.state());
        assertEquals(LinkLayer.ETHERNET, p.linkLayer());
        assertEquals(GidType.ROCE_V2, roce.gid().type(), roce.gid().toString());
        assertTrue(roce.gid().isIpv4(), roce.gid().toString());
        assertEquals(roce.ipAddress(), roce.gid().address(),
                roce.device().name() + "'s RoCEv2 GID is its interface's address: " + p.gids());

        Selection iwarp = LabDevices.select(Transport.IWARP);
        RdmaDevice iw = iwarp.device();
        assertEquals(Transport.IWARP, iw.transport());
        assertEquals(PortState.ACTIVE, iwarp.port().state());
        assertEquals(AtomicCapability.NONE, iw.capabilities().atomicCap(), "soft-iWARP has no atomics");
        assertFalse(iw.capabilities().maxSgeRd() > iw.capabilities().maxSge());
    }

    static Map<String, NativeDevice> parseDevinfo(String text) {
        Map<String, NativeDevice> result = new LinkedHashMap<>();
        Pattern kv = Pattern.compile("^\\s*([A-Za-z_]+):\\s*(.*)$");
        Pattern gid = Pattern.compile("^\\s*GID\\[\\s*(\\d+)\\]:\\s*(.*)$");
        String name = null, transport = null, guid = null, atomic = null;
        List<NativePort> ports = new ArrayList<>();
        String state = null, link = null;
        int mtu = 0;
        Map<Integer, String> gids = null;
        for (String line : (text + "\nhca_id:\tEND").split("\n")) {
            Matcher g = gid.matcher(line);
            if (g.matches()) {
                gids.put(Integer.parseInt(g.group(1)), g.group(2).trim());
                continue;
            }
            Matcher m = kv.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String k = m.group(1), v = m.group(2).trim();
            switch (k) {
                case "hca_id", "port" -> {
                    if (gids != null) {
                        ports.add(new NativePort(state, mtu, link, gids));
                        gids = null;
                    }
                    if (k.equals("port")) {
                        gids = new LinkedHashMap<>();
                    } else {
                        if (name != null) {
                            result.put(name, new NativeDevice(transport, guid, atomic, ports));
                        }
                        name = v;
                        ports = new ArrayList<>();
                    }
                }
                case "transport" -> transport = v;
                case "node_guid" -> guid = v;
                case "atomic_cap" -> atomic = v.split("\\s")[0];
                case "state" -> state = v.split("\\s")[0];
                case "active_mtu" -> mtu = Integer.parseInt(v.split("\\s")[0]);
                case "link_layer" -> link = v;
                default -> { }
            }
        }
        return result;
    }

    static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " hung");
        assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
        return out;
    }
}
