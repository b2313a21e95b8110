package org.rdmapanama;

import org.rdmapanama.device.Gid;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.error.RdmaException;
import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Names the lab's devices; device tests skip (never pass silently) where they are missing. */
final class LabDevices {
    private LabDevices() {}

    static final String ROCE = Optional.ofNullable(System.getenv("RDMA_TEST_ROCE_DEVICE")).orElse("rxe0");
    static final String IWARP = Optional.ofNullable(System.getenv("RDMA_TEST_IWARP_DEVICE")).orElse("siw0");

    static DeviceContext open(String name) throws RdmaException {
        boolean present = RdmaDevices.list().stream().anyMatch(d -> d.name().equals(name));
        assumeTrue(present, name + " is not present");
        return DeviceContext.open(name);
    }

    /** The RoCEv2 IPv4 GID of port 1, as the runtime's GID auto-selection would pick it. */
    static Gid roceV2Ipv4Gid(DeviceContext ctx) {
        return ctx.device().port(1).gids().stream()
                .filter(g -> g.type() == GidType.ROCE_V2 && g.isIpv4())
                .findFirst().orElseThrow(() -> new AssertionError("no RoCEv2 IPv4 GID on " + ctx.device()));
    }

    static int roceV2Ipv4GidIndex(DeviceContext ctx) {
        return roceV2Ipv4Gid(ctx).index();
    }

    /**
     * Connects two RC QPs of one RoCE device to each other out of band
     * (RESET to RTS, as rc_pingpong does), letting peers do {@code remote} here.
     */
    static void connect(QueuePair x, QueuePair y, Access... remote) throws RdmaException {
        Gid gid = roceV2Ipv4Gid(x.context());
        x.toInit(1, remote);
        y.toInit(1, remote);
        x.toRtr(new QpAddress(0, y.qpNumber(), 0x4321, gid.raw()), 1, gid.index(), 1024);
        y.toRtr(new QpAddress(0, x.qpNumber(), 0x1234, gid.raw()), 1, gid.index(), 1024);
        x.toRts(0x1234);
        y.toRts(0x4321);
    }
}
