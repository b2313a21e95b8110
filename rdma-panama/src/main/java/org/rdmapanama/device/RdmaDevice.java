package org.rdmapanama.device;

import java.util.List;

/**
 * A snapshot of one RDMA device as {@link RdmaDevices#list()} found it.
 *
 * @param name         the verbs name, such as {@code rxe0} or {@code mlx5_0}
 * @param nodeGuid     the node GUID, as a number
 * @param nodeType     {@code ibv_node_type_str}: {@code InfiniBand channel adapter}, {@code iWARP}, ...
 * @param transport    the transport of the first port (all ports of a device share it in practice)
 * @param capabilities the device limits
 * @param ports        the ports, from port 1
 */
public record RdmaDevice(String name, long nodeGuid, String nodeType, Transport transport,
                         DeviceCapabilities capabilities, List<Port> ports) {
    public RdmaDevice {
        ports = List.copyOf(ports);
    }

    /** The GUID as ibv_devinfo prints it, e.g. {@code 5054:00ff:fe12:3456}. */
    public String nodeGuidText() {
        String h = String.format("%016x", nodeGuid);
        return h.substring(0, 4) + ":" + h.substring(4, 8) + ":" + h.substring(8, 12) + ":" + h.substring(12);
    }

    /** Port {@code number}, counted from 1. */
    public Port port(int number) {
        if (number < 1 || number > ports.size()) {
            throw new IllegalArgumentException(name + " has no port " + number + "; its ports are 1.." + ports.size());
        }
        return ports.get(number - 1);
    }
}
