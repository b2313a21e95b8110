package org.rdmapanama.device;

import org.rdmapanama.RdmaException;
import org.rdmapanama.internal.DeviceQuery;

import java.nio.file.Files;
import java.nio.file.Path;
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
        return DeviceQuery.listDevices();
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
}
