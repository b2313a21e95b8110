package org.rdmapanama.verbs;

import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabPorts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Gid;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.Transport;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connections borrow librdmacm's one context per device: its capabilities
 * and GIDs are reused from connection to connection until the device reports
 * a port event, such as the GID change that follows a new address on a RoCE
 * interface; the ports' state and MTU are queried each time.
 */
@Tag("device")
class BorrowedContextDeviceTest {
    private static final Duration T = Duration.ofSeconds(30);

    /** The device of a connection resolved to {@code at} (resolving sends no packet and needs no listener). */
    private static RdmaDevice deviceOfAConnectionTo(InetSocketAddress at) throws Exception {
        try (RdmaConnection c = RdmaConnection.resolve(at, null, ConnectionOptions.defaults(), T)) {
            return c.context().device();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"ROCE_V2", "IWARP"})
    void aBorrowedContextIsDescribedOnceWhileNothingChanges(Transport t) throws Exception {
        InetSocketAddress at = new InetSocketAddress(FaultRig.addressOf(t), LabPorts.next());
        deviceOfAConnectionTo(at); // its watcher may start only now
        RdmaDevice second = deviceOfAConnectionTo(at);
        RdmaDevice third = deviceOfAConnectionTo(at);
        assertEquals(t, second.transport());
        assertSame(second.capabilities(), third.capabilities(), "a connection queried its unchanged device again");
        assertSame(second.ports().get(0).gids(), third.ports().get(0).gids(), "a connection read the unchanged GIDs again");
        assertEquals(second, third);
    }

    @Test
    void aGidChangeOnTheRoceInterfaceMakesTheNextConnectionSeeTheNewGid() throws Exception {
        InetSocketAddress at = new InetSocketAddress(FaultRig.addressOf(Transport.ROCE_V2), LabPorts.next());
        deviceOfAConnectionTo(at);
        RdmaDevice before = deviceOfAConnectionTo(at);
        String netdev = interfaceOf(at.getAddress());
        String extra = "10.77.250.9"; // inside the guest only, and removed again
        run("ip", "addr", "add", extra + "/32", "dev", netdev);
        try {
            RdmaDevice after = null;
            // The kernel's GID_CHANGE reaches the watcher thread shortly after the address.
            for (int i = 0; i < 100 && (after == null || after.ports().get(0).gids() == before.ports().get(0).gids()); i++) {
                Thread.sleep(100);
                after = deviceOfAConnectionTo(at);
            }
            assertNotSame(before.ports().get(0).gids(), after.ports().get(0).gids(), "no new GIDs after the GID table changed");
            List<String> gids = after.ports().get(0).gids().stream().map(Gid::toString).toList();
            assertTrue(gids.stream().anyMatch(g -> g.contains("::ffff:" + extra)), gids.toString());
        } finally {
            run("ip", "addr", "del", extra + "/32", "dev", netdev);
        }
    }

    /** An MTU change raises no event: the port's MTU is read at every borrow. */
    @Test
    void anMtuChangeOnTheRoceInterfaceIsSeenByTheNextConnection() throws Exception {
        InetSocketAddress at = new InetSocketAddress(FaultRig.addressOf(Transport.ROCE_V2), LabPorts.next());
        deviceOfAConnectionTo(at);
        RdmaDevice before = deviceOfAConnectionTo(at);
        String netdev = interfaceOf(at.getAddress());
        String mtu = Files.readString(Path.of("/sys/class/net", netdev, "mtu")).strip();
        // rxe's active MTU is the largest IB MTU that fits the interface's: 1500 gives 1024, 9000 gives 4096.
        String other = Integer.parseInt(mtu) >= 4200 ? "1500" : "9000";
        run("ip", "link", "set", netdev, "mtu", other);
        try {
            RdmaDevice after = deviceOfAConnectionTo(at);
            assertSame(before.capabilities(), after.capabilities()); // still the reused description
            assertTrue(after.ports().get(0).activeMtu() != before.ports().get(0).activeMtu(),
                    "active MTU " + after.ports().get(0).activeMtu() + " after the interface's MTU went from " + mtu
                            + " to " + other);
        } finally {
            run("ip", "link", "set", netdev, "mtu", mtu);
        }
    }

    /** The interface that carries {@code addr}, from "4: dummy0    inet 10.77.0.1/24 ...". */
    private static String interfaceOf(InetAddress addr) throws IOException, InterruptedException {
        String[] line = run("ip", "-o", "-4", "addr", "show", "to", addr.getHostAddress() + "/32").strip().split("\\s+");
        assertTrue(line.length > 1, "no interface carries " + addr);
        return line[1];
    }

    private static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd) + " did not end");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
        return out;
    }
}
