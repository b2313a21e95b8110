package org.rdmapanama.verbs;

import org.rdmapanama.device.GidType;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.LabDevices;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each configuration source opens the device it names, on the lab's real devices. */
@Tag("device")
class ConfigSelectionDeviceTest {
    static DeviceContext open(Properties props, Map<String, String> env) throws RdmaException {
        return DeviceContext.open(RdmaConfig.load(props, env));
    }

    @Test
    void systemPropertyTransportIwarpOpensSiw() throws Exception {
        Properties p = new Properties();
        p.setProperty("rdma.transport", "iwarp");
        try (DeviceContext ctx = open(p, Map.of())) {
            assertEquals(LabDevices.IWARP, ctx.device().name());
            assertEquals(Transport.IWARP, ctx.selection().transport());
        }
    }

    @Test
    void environmentTransportRocev2OpensRxeWithTheRoceV2Ipv4Gid() throws Exception {
        try (DeviceContext ctx = open(new Properties(), Map.of("RDMA_TRANSPORT", "rocev2"))) {
            assertEquals(LabDevices.ROCE, ctx.device().name());
            Selection s = ctx.selection();
            assertEquals(LabDevices.roceV2Ipv4GidIndex(ctx), s.gidIndex());
            assertEquals(GidType.ROCE_V2, s.gid().type());
            assertTrue(s.gid().isIpv4());
            assertEquals(System.getenv("RDMA_LAB_ADDR_RXE0"), s.ipAddress().getHostAddress());
        }
    }

    @Test
    void configFileDeviceOpensThatDevice(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rdma.properties");
        Files.writeString(file, "device=" + LabDevices.IWARP + "\nport=1\n");
        Properties p = new Properties();
        p.setProperty("rdma.config", file.toString());
        try (DeviceContext ctx = open(p, Map.of())) {
            assertEquals(LabDevices.IWARP, ctx.device().name());
            assertEquals(System.getenv("RDMA_LAB_ADDR_SIW0"), ctx.selection().ipAddress().getHostAddress());
        }
    }

    @Test
    void aMismatchListsWhatExists() {
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class,
                () -> open(new Properties(), Map.of("RDMA_TRANSPORT", "ib")));
        assertTrue(e.getMessage().contains("rxe0 (RoCEv2)") && e.getMessage().contains("siw0 (iWARP)"), e.getMessage());
        assertTrue(e.getMessage().contains("environment variable RDMA_TRANSPORT"), e.getMessage());
        RdmaException unknown = assertThrows(RdmaException.class, () -> DeviceContext.open("mlx5_9"));
        assertTrue(unknown.getMessage().contains("no RDMA device named 'mlx5_9'"), unknown.getMessage());
        assertTrue(unknown.getMessage().contains("rxe0 (RoCEv2)"), unknown.getMessage());
    }
}
