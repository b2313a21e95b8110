package org.rdmapanama.testkit;

import org.rdmapanama.device.Gid;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.QpAddress;
import org.rdmapanama.verbs.QueuePair;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The lab's devices, picked by transport through the runtime's own
 * {@link Selection}: a device name is only ever what selection answered.
 * {@code RDMA_TEST_ROCE_DEVICE} / {@code RDMA_TEST_IWARP_DEVICE} narrow the
 * pick to one device, which must then have that transport (a wrong override
 * fails, it does not skip). Device tests skip (never pass silently) where no
 * device has the transport.
 */
public final class LabDevices {
    private LabDevices() {}

    /** The transports the lab has a device for (soft-RoCE, soft-iWARP). */
    public static final List<Transport> TRANSPORTS = List.of(Transport.ROCE_V2, Transport.IWARP);

    /** {@link #TRANSPORTS}, as {@link OnEveryLabTransport} takes them. */
    public static List<Transport> transports() {
        return TRANSPORTS;
    }

    public static final String ROCE = nameOrPlaceholder(Transport.ROCE_V2);
    public static final String IWARP = nameOrPlaceholder(Transport.IWARP);

    public static Optional<String> override(Transport t) {
        return Optional.ofNullable(System.getenv(t == Transport.IWARP ? "RDMA_TEST_IWARP_DEVICE" : "RDMA_TEST_ROCE_DEVICE"));
    }

    public static RdmaConfig config(Transport t) {
        return RdmaConfig.any().withTransport(t.name()).withDevice(override(t).orElse(null));
    }

    /** The device, port and GID selection picks for {@code t}; skips the test where there is none. */
    public static Selection select(Transport t) throws RdmaException {
        try {
            return Selection.select(config(t), RdmaDevices.list());
        } catch (NoSuchDeviceException e) {
            if (override(t).isPresent()) {
                throw new AssertionError("the device named for " + t + " does not have it: " + e.getMessage(), e);
            }
            assumeTrue(false, e.getMessage());
            throw e;
        }
    }

    /** Opens what {@link #select} picks; {@link DeviceContext#selection()} is then that selection. */
    public static DeviceContext open(Transport t) throws RdmaException {
        select(t); // skip or fail as select does
        return DeviceContext.open(config(t));
    }

    /** For the constants: a missing device must skip the tests that use it, not fail this class's loading. */
    private static String nameOrPlaceholder(Transport t) {
        try {
            return Selection.select(config(t), RdmaDevices.list()).device().name();
        } catch (Throwable e) {
            return "(no " + t + " device)";
        }
    }

    public static DeviceContext open(String name) throws RdmaException {
        boolean present = RdmaDevices.list().stream().anyMatch(d -> d.name().equals(name));
        assumeTrue(present, name + " is not present");
        return DeviceContext.open(name);
    }

    /**
     * The RoCEv2 IPv4 GID of port 1 found by type here, independently of the
     * runtime's selection (ConfigSelectionDeviceTest checks one against the other).
     */
    public static Gid roceV2Ipv4Gid(DeviceContext ctx) {
        return ctx.device().port(1).gids().stream()
                .filter(g -> g.type() == GidType.ROCE_V2 && g.isIpv4())
                .findFirst().orElseThrow(() -> new AssertionError("no RoCEv2 IPv4 GID on " + ctx.device()));
    }

    public static int roceV2Ipv4GidIndex(DeviceContext ctx) {
        return roceV2Ipv4Gid(ctx).index();
    }

    /** The selection for a context opened by name: its port and GID as a RoCEv2 peer must address it. */
    public static Selection roceSelection(DeviceContext ctx) throws NoSuchDeviceException {
        return Selection.select(RdmaConfig.any().withTransport(Transport.ROCE_V2.name()).withDevice(ctx.device().name()),
                List.of(ctx.device()));
    }

    /**
     * Connects two RC QPs of one RoCE device to each other out of band
     * (RESET to RTS, as rc_pingpong does), on the port and GID selection
     * picks for RoCEv2, letting peers do {@code remote} here.
     */
    public static void connect(QueuePair x, QueuePair y, Access... remote) throws RdmaException {
        Selection s = roceSelection(x.context());
        int port = s.port().number();
        x.toInit(port, remote);
        y.toInit(port, remote);
        x.toRtr(new QpAddress(0, y.qpNumber(), 0x4321, s.gid().raw()), port, s.gidIndex(), 1024);
        y.toRtr(new QpAddress(0, x.qpNumber(), 0x1234, s.gid().raw()), port, s.gidIndex(), 1024);
        x.toRts(0x1234);
        y.toRts(0x4321);
    }
}
