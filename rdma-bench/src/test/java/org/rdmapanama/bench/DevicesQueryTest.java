package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Gid;
import static org.rdmapanama.testkit.TestGids.gid;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.PortState;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code rdma-bench devices --transport|--address|--perftest-flags DEV}: the arguments and the answers. */
class DevicesQueryTest {
    private record Result(int status, String out, String err) {}

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = DevicesCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static RdmaDevice device(String name, Transport t, LinkLayer link, PortState state, List<Gid> gids) {
        return new RdmaDevice(name, 1, "x", t, null, List.of(new Port(1, state, link, t, 0, 1024, 4096, 16, gids)));
    }

    private static int loopbackIndex() {
        try {
            NetworkInterface lo = NetworkInterface.getByInetAddress(java.net.InetAddress.getLoopbackAddress());
            assumeTrue(lo != null, "no loopback interface");
            return lo.getIndex();
        } catch (SocketException e) {
            throw new AssertionError(e);
        }
    }

    // A RoCE device lists a v1 and a v2 entry per address, link-local first: the IPv4 RoCEv2 GID is index 3.
    private static final RdmaDevice ROCE = device("mlx5_0", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.ACTIVE,
            List.of(gid(0, GidType.ROCE_V1, false, 0), gid(1, GidType.ROCE_V2, false, 0),
                    gid(2, GidType.ROCE_V1, true, 0), gid(3, GidType.ROCE_V2, true, 0)));
    private static final RdmaDevice IWARP = device("siw0", Transport.IWARP, LinkLayer.ETHERNET, PortState.ACTIVE,
            List.of(gid(0, GidType.IB, false, 0)));
    private static final RdmaDevice IB = device("mlx5_1", Transport.INFINIBAND, LinkLayer.INFINIBAND,
            PortState.ACTIVE, List.of(gid(0, GidType.IB, false, 0)));
    private static final List<RdmaDevice> ALL = List.of(ROCE, IWARP, IB);

    private static List<String> ask(DevicesCommand.Ask ask, String dev, List<RdmaDevice> devices)
            throws NoSuchDeviceException {
        return DevicesCommand.answer(List.of(new DevicesCommand.Query(ask, dev)), devices);
    }

    @Test
    void perftestFlagsFollowTheTransportNotTheName() throws Exception {
        assertEquals(List.of("-x 3"), ask(DevicesCommand.Ask.PERFTEST_FLAGS, "mlx5_0", ALL));
        assertEquals(List.of("-R"), ask(DevicesCommand.Ask.PERFTEST_FLAGS, "siw0", ALL));
        assertEquals(List.of(""), ask(DevicesCommand.Ask.PERFTEST_FLAGS, "mlx5_1", ALL));
    }

    @Test
    void transportsAreTheDisplayNamesTheResultsUse() throws Exception {
        assertEquals(List.of("RoCEv2", "iWARP", "InfiniBand"), DevicesCommand.answer(List.of(
                new DevicesCommand.Query(DevicesCommand.Ask.TRANSPORT, "mlx5_0"),
                new DevicesCommand.Query(DevicesCommand.Ask.TRANSPORT, "siw0"),
                new DevicesCommand.Query(DevicesCommand.Ask.TRANSPORT, "mlx5_1")), ALL));
    }

    @Test
    void addressIsTheOneOfTheInterfaceTheGidBelongsTo() throws Exception {
        int lo = loopbackIndex();
        RdmaDevice onLoopback = device("rxe0", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.ACTIVE,
                List.of(gid(1, GidType.ROCE_V2, true, lo)));
        List<String> got = DevicesCommand.answer(List.of(
                new DevicesCommand.Query(DevicesCommand.Ask.ADDRESS, "rxe0"),
                new DevicesCommand.Query(DevicesCommand.Ask.PERFTEST_FLAGS, "rxe0")), List.of(onLoopback));
        assertEquals(List.of("127.0.0.1", "-x 1"), got);
    }

    @Test
    void unknownDeviceNamesTheOnesThatExist() {
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class,
                () -> ask(DevicesCommand.Ask.TRANSPORT, "rxe9", ALL));
        assertEquals("no RDMA device 'rxe9'; there are: mlx5_0 (RoCEv2), siw0 (iWARP), mlx5_1 (InfiniBand)",
                e.getMessage());
    }

    @Test
    void roceWithoutAnIpv4GidIsAnErrorNotAGuess() {
        RdmaDevice v6only = device("rxe0", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.ACTIVE,
                List.of(gid(0, GidType.ROCE_V2, false, 0)));
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class,
                () -> ask(DevicesCommand.Ask.PERFTEST_FLAGS, "rxe0", List.of(v6only)));
        assertTrue(e.getMessage().contains("no RoCEv2 GID with an IPv4 address"), e.getMessage());
    }

    @Test
    void portThatIsNotActiveIsAnError() {
        RdmaDevice down = device("rxe0", Transport.ROCE_V2, LinkLayer.ETHERNET, PortState.DOWN,
                List.of(gid(1, GidType.ROCE_V2, true, 0)));
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class,
                () -> ask(DevicesCommand.Ask.TRANSPORT, "rxe0", List.of(down)));
        assertTrue(e.getMessage().contains("not ACTIVE"), e.getMessage());
    }

    @Test
    void badArgumentsAreUsageErrorsBeforeAnyDeviceIsAsked() {
        for (String[] args : new String[][] {{"--perftest-flags"}, {"--address", "-v"}, {"--transport="},
                {"--gid", "rxe0"}, {"-v", "--transport", "rxe0"}}) {
            Result r = run(args);
            assertEquals(2, r.status(), String.join(" ", args));
            assertEquals("", r.out());
            assertTrue(r.err().startsWith("rdma-bench devices: "), r.err());
            assertTrue(r.err().contains("usage: rdma-bench devices"), r.err());
        }
    }

    @Test
    void queryOnAHostWithoutDevicesFailsWithUsageStatus() {
        assumeTrue(!java.nio.file.Files.isDirectory(java.nio.file.Path.of("/sys/class/infiniband")),
                "this machine has RDMA support");
        Result r = run("--perftest-flags", "rxe0");
        assertEquals(2, r.status(), r.err());
        assertEquals("", r.out());
        assertEquals(1, r.err().lines().count(), r.err());
    }
}
