package org.rdmapanama.internal;

import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.device.Gid;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.PortState;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.RdmaException;
import org.rdmapanama.device.Transport;
import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_device_attr;
import org.rdmapanama.ffi.ibv_gid_entry;
import org.rdmapanama.ffi.ibv_port_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** Builds {@link RdmaDevice} snapshots: opens each device, queries it, closes it. */
public final class DeviceQuery {
    private DeviceQuery() {}

    public static List<RdmaDevice> listDevices() throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list = Verbs.getDeviceList(count);
            try {
                int n = count.get(JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
                List<RdmaDevice> result = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    result.add(describe(arena, devices.getAtIndex(ADDRESS, i)));
                }
                return List.copyOf(result);
            } finally {
                Verbs.freeDeviceList(list);
            }
        }
    }

    private static RdmaDevice describe(Arena arena, MemorySegment device) throws RdmaException {
        String name = Verbs.deviceName(device);
        MemorySegment ctx = Verbs.openDevice(device, name);
        try {
            return describeOpen(arena, device, ctx);
        } finally {
            Verbs.closeDevice(ctx, name);
        }
    }

    /** Finds a device by name in an {@code ibv_get_device_list} array, or NULL. */
    public static MemorySegment find(MemorySegment list, int count, String name) {
        MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * count);
        for (int i = 0; i < count; i++) {
            MemorySegment d = devices.getAtIndex(ADDRESS, i);
            if (Verbs.deviceName(d).equals(name)) {
                return d;
            }
        }
        return MemorySegment.NULL;
    }

    /** Describes a device through a context the caller opened (and closes). */
    public static RdmaDevice describeOpen(Arena arena, MemorySegment device, MemorySegment ctx) throws RdmaException {
        String name = Verbs.deviceName(device);
        long guid = Verbs.deviceGuid(device);
        boolean iwarp = Verbs.transportType(device) == Rdma.IBV_TRANSPORT_IWARP();
        String nodeType = Rdma.ibv_node_type_str(Verbs.nodeType(device)).reinterpret(64).getString(0);
        MemorySegment attr = arena.allocate(ibv_device_attr.layout());
        Verbs.queryDevice(ctx, attr, name);
        DeviceCapabilities caps = capabilities(attr);
        List<PortGid> allGids = gidTable(arena, ctx, name, caps.physPortCount());
        List<Port> ports = new ArrayList<>();
        MemorySegment portAttr = arena.allocate(ibv_port_attr.layout());
        for (int p = 1; p <= caps.physPortCount(); p++) {
            Verbs.queryPort(ctx, p, portAttr, name);
            int portNumber = p;
            List<Gid> gids = allGids.stream().filter(g -> g.port() == portNumber).map(PortGid::gid).toList();
            if (gids.isEmpty()) {
                gids = legacyGids(arena, ctx, p, ibv_port_attr.gid_tbl_len(portAttr));
            }
            LinkLayer link = LinkLayer.of(ibv_port_attr.link_layer(portAttr));
            ports.add(new Port(p,
                    PortState.of(ibv_port_attr.state(portAttr)),
                    link,
                    Port.classify(iwarp, link, gids),
                    Short.toUnsignedInt(ibv_port_attr.lid(portAttr)),
                    Port.mtuBytes(ibv_port_attr.active_mtu(portAttr)),
                    Port.mtuBytes(ibv_port_attr.max_mtu(portAttr)),
                    ibv_port_attr.gid_tbl_len(portAttr),
                    gids));
        }
        Transport transport = ports.isEmpty() ? (iwarp ? Transport.IWARP : Transport.INFINIBAND)
                : ports.getFirst().transport();
        return new RdmaDevice(name, guid, nodeType, transport, caps, ports);
    }

    private static DeviceCapabilities capabilities(MemorySegment a) {
        return new DeviceCapabilities(
                ibv_device_attr.fw_ver(a).getString(0),
                ibv_device_attr.vendor_id(a),
                ibv_device_attr.vendor_part_id(a),
                ibv_device_attr.hw_ver(a),
                ibv_device_attr.max_mr_size(a),
                ibv_device_attr.max_qp(a),
                ibv_device_attr.max_qp_wr(a),
                ibv_device_attr.max_sge(a),
                ibv_device_attr.max_sge_rd(a),
                ibv_device_attr.max_cq(a),
                ibv_device_attr.max_cqe(a),
                ibv_device_attr.max_mr(a),
                ibv_device_attr.max_pd(a),
                ibv_device_attr.max_qp_rd_atom(a),
                ibv_device_attr.max_qp_init_rd_atom(a),
                AtomicCapability.of(ibv_device_attr.atomic_cap(a)),
                ibv_device_attr.max_srq(a),
                ibv_device_attr.max_srq_wr(a),
                ibv_device_attr.max_srq_sge(a),
                ibv_device_attr.max_ah(a),
                Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(a)));
    }

    private record PortGid(int port, Gid gid) {}

    /** All valid GIDs with their types, through {@code ibv_query_gid_table}. */
    private static List<PortGid> gidTable(Arena arena, MemorySegment ctx, String name, int ports)
            throws RdmaException {
        // rxe has 1024 slots, mlx5 256 per port; grow until the table fits.
        for (long max = 256L * Math.max(1, ports); ; max *= 4) {
            MemorySegment entries = arena.allocate(ibv_gid_entry.layout(), max);
            long n = Verbs.queryGidTable(ctx, entries, max, ibv_gid_entry.sizeof());
            if (n == -Errno.EOPNOTSUPP) {
                return List.of(); // old kernel or provider: fall back per port
            }
            if (n == -Errno.EINVAL && max < 65536) {
                continue; // more valid entries than max
            }
            if (n < 0) {
                throw Verbs.failure("ibv_query_gid_table", name, (int) -n);
            }
            List<PortGid> gids = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                MemorySegment e = ibv_gid_entry.asSlice(entries, i);
                gids.add(new PortGid(ibv_gid_entry.port_num(e), new Gid(
                        ibv_gid_entry.gid_index(e),
                        ibv_gid_entry.gid(e).toArray(JAVA_BYTE),
                        GidType.of(ibv_gid_entry.gid_type(e)),
                        ibv_gid_entry.ndev_ifindex(e))));
            }
            return gids;
        }
    }

    /** {@code ibv_query_gid} index by index, type unknown; empty slots read as zero. */
    private static List<Gid> legacyGids(Arena arena, MemorySegment ctx, int port, int tableLength) {
        MemorySegment raw = arena.allocate(16);
        List<Gid> gids = new ArrayList<>();
        for (int i = 0; i < tableLength; i++) {
            if (Verbs.queryGid(ctx, port, i, raw) != 0) {
                continue;
            }
            byte[] bytes = raw.toArray(JAVA_BYTE);
            if (!isZero(bytes)) {
                gids.add(new Gid(i, bytes, GidType.UNKNOWN, 0));
            }
        }
        return gids;
    }

    private static boolean isZero(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
