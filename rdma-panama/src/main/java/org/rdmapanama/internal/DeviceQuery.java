package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_context;
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

/**
 * Opens each device, queries it and closes it again; hands back what the C
 * calls returned, which {@code org.rdmapanama.device} turns into its records
 * (this package depends on no public one). The attribute segments live in
 * the caller's arena, which it closes once it has read them: an automatic
 * arena would hold their native memory until a GC, and a connection loop
 * (one describe per borrowed rdma_cm context) would see it grow.
 */
public final class DeviceQuery {
    private DeviceQuery() {}

    /** {@link RawGid#type()} when the provider cannot say ({@code ibv_query_gid} has no type). */
    public static final int GID_TYPE_UNKNOWN = -1;

    /**
     * One device.
     *
     * @param deviceAttr a {@code struct ibv_device_attr}
     * @param iwarp      the device's transport type is {@code IBV_TRANSPORT_IWARP}
     */
    public record RawDevice(String name, long guid, String nodeType, boolean iwarp, MemorySegment deviceAttr,
                            List<RawPort> ports) {}

    /** One port, from 1; {@code portAttr} is a {@code struct ibv_port_attr}. */
    public record RawPort(int number, MemorySegment portAttr, List<RawGid> gids) {}

    /** One valid GID entry; {@code type} is an {@code enum ibv_gid_type} or {@link #GID_TYPE_UNKNOWN}. */
    public record RawGid(int index, byte[] raw, int type, int ifindex) {}

    /** Every device; the attribute segments are allocated in {@code arena}. */
    public static List<RawDevice> listDevices(Arena arena) throws RdmaException {
        MemorySegment count = arena.allocate(JAVA_INT);
        MemorySegment list = Verbs.getDeviceList(count);
        try {
            int n = count.get(JAVA_INT, 0);
            MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
            List<RawDevice> result = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                result.add(describe(arena, devices.getAtIndex(ADDRESS, i)));
            }
            return List.copyOf(result);
        } finally {
            Verbs.freeDeviceList(list);
        }
    }

    private static RawDevice describe(Arena arena, MemorySegment device) throws RdmaException {
        String name = Verbs.deviceName(device);
        MemorySegment ctx = Verbs.openDevice(device, name);
        try {
            return describeOpen(arena, ctx);
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

    /**
     * Describes a device through an open {@code struct ibv_context *} that the
     * caller owns (and closes); the attribute segments are allocated in {@code arena}.
     */
    public static RawDevice describeOpen(Arena arena, MemorySegment context) throws RdmaException {
        MemorySegment ctx = context.reinterpret(ibv_context.sizeof());
        MemorySegment device = ibv_context.device(ctx);
        String name = Verbs.deviceName(device);
        long guid = Verbs.deviceGuid(device);
        boolean iwarp = Verbs.transportType(device) == Rdma.IBV_TRANSPORT_IWARP();
        String nodeType = Rdma.ibv_node_type_str(Verbs.nodeType(device)).reinterpret(64).getString(0);
        MemorySegment attr = arena.allocate(ibv_device_attr.layout());
        Verbs.queryDevice(ctx, attr, name);
        int portCount = Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(attr));
        try (Arena scratch = Arena.ofConfined()) {
            List<PortGid> allGids = gidTable(scratch, ctx, name, portCount);
            List<RawPort> ports = new ArrayList<>();
            for (int p = 1; p <= portCount; p++) {
                MemorySegment portAttr = arena.allocate(ibv_port_attr.layout());
                Verbs.queryPort(ctx, p, portAttr, name);
                int portNumber = p;
                List<RawGid> gids = allGids.stream().filter(g -> g.port() == portNumber).map(PortGid::gid).toList();
                if (gids.isEmpty()) {
                    gids = legacyGids(scratch, ctx, p, ibv_port_attr.gid_tbl_len(portAttr));
                }
                ports.add(new RawPort(p, portAttr, gids));
            }
            return new RawDevice(name, guid, nodeType, iwarp, attr, List.copyOf(ports));
        }
    }

    /** One port's {@code struct ibv_port_attr}, queried now through an open context, allocated in {@code arena}. */
    public static MemorySegment queryPort(Arena arena, MemorySegment context, int port, String name) throws RdmaException {
        MemorySegment attr = arena.allocate(ibv_port_attr.layout());
        Verbs.queryPort(context.reinterpret(ibv_context.sizeof()), port, attr, name);
        return attr;
    }

    private record PortGid(int port, RawGid gid) {}

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
                throw Errno.failure("ibv_query_gid_table", name, (int) n);
            }
            List<PortGid> gids = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                MemorySegment e = ibv_gid_entry.asSlice(entries, i);
                gids.add(new PortGid(ibv_gid_entry.port_num(e), new RawGid(
                        ibv_gid_entry.gid_index(e),
                        ibv_gid_entry.gid(e).toArray(JAVA_BYTE),
                        ibv_gid_entry.gid_type(e),
                        ibv_gid_entry.ndev_ifindex(e))));
            }
            return gids;
        }
    }

    /** {@code ibv_query_gid} index by index, type unknown; empty slots read as zero. */
    private static List<RawGid> legacyGids(Arena arena, MemorySegment ctx, int port, int tableLength) {
        MemorySegment raw = arena.allocate(16);
        List<RawGid> gids = new ArrayList<>();
        for (int i = 0; i < tableLength; i++) {
            if (Verbs.queryGid(ctx, port, i, raw) != 0) {
                continue;
            }
            byte[] bytes = raw.toArray(JAVA_BYTE);
            if (!isZero(bytes)) {
                gids.add(new RawGid(i, bytes, GID_TYPE_UNKNOWN, 0));
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
