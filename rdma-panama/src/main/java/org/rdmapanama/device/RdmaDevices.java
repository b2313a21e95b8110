package org.rdmapanama.device;

import org.rdmapanama.error.NoRdmaDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.DeviceAttributes;
import org.rdmapanama.internal.DeviceQuery.RawDevice;
import org.rdmapanama.internal.DeviceQuery.RawPort;
import org.rdmapanama.internal.DeviceQuery;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Entry point for device discovery. */
public final class RdmaDevices {
    private RdmaDevices() {}

    /**
     * Every device libibverbs reports, each opened, queried and closed again.
     * Empty when there is none.
     *
     * @throws RdmaException when libibverbs cannot be loaded or a query fails
     */
    public static List<RdmaDevice> list() throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            List<RdmaDevice> devices = new ArrayList<>();
            for (RawDevice d : DeviceQuery.listDevices(arena)) {
                devices.add(of(d));
            }
            return List.copyOf(devices);
        }
    }

    /**
     * Describes the device behind an open {@code struct ibv_context *} (from
     * {@code ibv_open_device}, or a cm_id's {@code verbs}); the context stays
     * its owner's.
     *
     * @throws RdmaException when a query fails
     */
    public static RdmaDevice describe(MemorySegment ibvContext) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            return of(DeviceQuery.describeOpen(arena, ibvContext));
        }
    }

    /**
     * Like {@link #list()}, but no device is an error that says what to do.
     *
     * @throws NoRdmaDeviceException when there is no device
     */
    public static List<RdmaDevice> require() throws RdmaException {
        List<RdmaDevice> devices = list();
        if (devices.isEmpty()) {
            String why = Files.isDirectory(Path.of("/sys/class/infiniband"))
                    ? "no RDMA NIC, or no driver such as mlx5_ib, rdma_rxe or siw bound to one"
                    : "this kernel has no RDMA support: /sys/class/infiniband is missing";
            throw new NoRdmaDeviceException("no RDMA devices found (" + why + "); "
                    + "without RDMA hardware, use the soft-RDMA lab: scripts/rdma-lab -- <command>");
        }
        return devices;
    }

    /**
     * {@code known} with each port's state, LID and MTUs queried anew
     * ({@code ibv_query_port}, one call a port); its capabilities, GIDs and
     * transport kept. For a description that is reused while the device
     * reports no event: an MTU change on the interface, for one, raises none.
     */
    public static RdmaDevice withPortsQueried(RdmaDevice known, MemorySegment ibvContext) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            List<Port> ports = new ArrayList<>(known.ports().size());
            for (Port p : known.ports()) {
                MemorySegment a = DeviceQuery.queryPort(arena, ibvContext, p.number(), known.name());
                ports.add(new Port(p.number(), PortState.of(DeviceAttributes.portState(a)), p.linkLayer(), p.transport(),
                        DeviceAttributes.lid(a), Port.mtuBytes(DeviceAttributes.activeMtu(a)),
                        Port.mtuBytes(DeviceAttributes.maxMtu(a)), DeviceAttributes.gidTableLength(a), p.gids()));
            }
            return new RdmaDevice(known.name(), known.nodeGuid(), known.nodeType(), known.transport(),
                    known.capabilities(), List.copyOf(ports));
        }
    }

    private static RdmaDevice of(RawDevice d) {
        List<Port> ports = new ArrayList<>();
        for (RawPort p : d.ports()) {
            MemorySegment a = p.portAttr();
            List<Gid> gids = p.gids().stream()
                    .map(g -> new Gid(g.index(), g.raw(), GidType.of(g.type()), g.ifindex())).toList();
            LinkLayer link = LinkLayer.of(DeviceAttributes.linkLayer(a));
            ports.add(new Port(p.number(),
                    PortState.of(DeviceAttributes.portState(a)),
                    link,
                    Port.classify(d.iwarp(), link, gids),
                    DeviceAttributes.lid(a),
                    Port.mtuBytes(DeviceAttributes.activeMtu(a)),
                    Port.mtuBytes(DeviceAttributes.maxMtu(a)),
                    DeviceAttributes.gidTableLength(a),
                    gids));
        }
        Transport transport = ports.isEmpty() ? (d.iwarp() ? Transport.IWARP : Transport.INFINIBAND)
                : ports.getFirst().transport();
        return new RdmaDevice(d.name(), d.guid(), d.nodeType(), transport, capabilities(d.deviceAttr()), ports);
    }

    private static DeviceCapabilities capabilities(MemorySegment a) {
        return new DeviceCapabilities(
                DeviceAttributes.firmwareVersion(a),
                DeviceAttributes.vendorId(a),
                DeviceAttributes.vendorPartId(a),
                DeviceAttributes.hardwareVersion(a),
                DeviceAttributes.maxMrSize(a),
                DeviceAttributes.maxQp(a),
                DeviceAttributes.maxQpWr(a),
                DeviceAttributes.maxSge(a),
                DeviceAttributes.maxSgeRd(a),
                DeviceAttributes.maxCq(a),
                DeviceAttributes.maxCqe(a),
                DeviceAttributes.maxMr(a),
                DeviceAttributes.maxPd(a),
                DeviceAttributes.maxQpRdAtom(a),
                DeviceAttributes.maxQpInitRdAtom(a),
                AtomicCapability.of(DeviceAttributes.atomicCap(a)),
                DeviceAttributes.maxSrq(a),
                DeviceAttributes.maxSrqWr(a),
                DeviceAttributes.maxSrqSge(a),
                DeviceAttributes.maxAh(a),
                DeviceAttributes.physPortCount(a));
    }
}
