package org.rdmapanama.device;

import java.util.List;

/**
 * A snapshot of one port ({@code ibv_query_port}) and its GID table.
 *
 * @param number    the port number, from 1
 * @param state     the logical port state
 * @param linkLayer InfiniBand or Ethernet
 * @param transport what this port carries, derived from the device and the port
 * @param lid       the port's LID (InfiniBand only; 0 on Ethernet)
 * @param activeMtu the active path MTU in bytes (256 .. 4096)
 * @param maxMtu    the largest path MTU the port supports, in bytes
 * @param gidTableLength the size of the GID table, used or not
 * @param gids      the valid GID entries, by index
 */
public record Port(int number, PortState state, LinkLayer linkLayer, Transport transport, int lid,
                   int activeMtu, int maxMtu, int gidTableLength, List<Gid> gids) {
    public Port {
        gids = List.copyOf(gids);
    }

    /** {@code IBV_MTU_256} .. {@code IBV_MTU_4096} (1..5) in bytes. */
    public static int mtuBytes(int ibvMtu) {
        return ibvMtu >= 1 && ibvMtu <= 5 ? 128 << ibvMtu : 0;
    }

    /**
     * The transport of a port: iWARP by the device's transport type, then
     * InfiniBand by link layer, then RoCEv2 if any GID is a RoCEv2 one.
     */
    public static Transport classify(boolean iwarpDevice, LinkLayer linkLayer, List<Gid> gids) {
        if (iwarpDevice) {
            return Transport.IWARP;
        }
        if (linkLayer != LinkLayer.ETHERNET) {
            return Transport.INFINIBAND;
        }
        return gids.stream().anyMatch(g -> g.type() == GidType.ROCE_V2) ? Transport.ROCE_V2 : Transport.ROCE_V1;
    }
}
