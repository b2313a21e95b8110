package org.rdmapanama.bench;

import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.device.Gid;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.error.NoRdmaDeviceException;
import org.rdmapanama.error.RdmaException;

import java.io.PrintStream;
import java.util.List;

/** {@code rdma-bench devices}: what ibv_devinfo shows, plus the transport each device is classified as. */
final class DevicesCommand {
    private DevicesCommand() {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        boolean verbose = false;
        for (String a : args) {
            if (a.equals("-v") || a.equals("--verbose")) {
                verbose = true;
            } else {
                err.println("rdma-bench devices: unknown argument '" + a + "'");
                err.println("usage: rdma-bench devices [-v]");
                return Main.USAGE;
            }
        }
        List<RdmaDevice> devices;
        try {
            devices = RdmaDevices.require();
        } catch (NoRdmaDeviceException e) {
            err.println("rdma-bench: " + e.getMessage());
            return Main.USAGE;
        } catch (RdmaException e) {
            err.println("rdma-bench: " + e.getMessage());
            return Main.FAILED;
        }
        out.println(devices.size() + (devices.size() == 1 ? " RDMA device" : " RDMA devices"));
        for (RdmaDevice d : devices) {
            print(d, verbose, out);
        }
        return Main.OK;
    }

    private static void print(RdmaDevice d, boolean verbose, PrintStream out) {
        DeviceCapabilities c = d.capabilities();
        out.println();
        out.printf("%s  transport %s%n", d.name(), d.transport().displayName());
        out.printf("  node_guid   %s%n", d.nodeGuidText());
        out.printf("  node_type   %s%n", d.nodeType());
        out.printf("  fw_ver      %s%n", c.firmwareVersion().isEmpty() ? "-" : c.firmwareVersion());
        out.printf("  atomic_cap  %s, max_sge %d, max_sge_rd %d%n", c.atomicCap(), c.maxSge(), c.maxSgeRd());
        if (verbose) {
            out.printf("  limits      max_qp %d, max_qp_wr %d, max_cq %d, max_cqe %d, max_mr %d, max_mr_size %d,%n"
                            + "              max_pd %d, max_qp_rd_atom %d, max_qp_init_rd_atom %d, max_srq %d, max_srq_wr %d, max_ah %d%n",
                    c.maxQp(), c.maxQpWr(), c.maxCq(), c.maxCqe(), c.maxMr(), c.maxMrSize(),
                    c.maxPd(), c.maxQpRdAtom(), c.maxQpInitRdAtom(), c.maxSrq(), c.maxSrqWr(), c.maxAh());
        }
        for (Port p : d.ports()) {
            out.printf("  port %d      %s, link_layer %s, transport %s, active_mtu %d, lid %d, gid_tbl_len %d%n",
                    p.number(), p.state(), p.linkLayer(), p.transport().displayName(), p.activeMtu(), p.lid(),
                    p.gidTableLength());
            if (p.gids().isEmpty()) {
                out.println("    (no valid GID)");
            }
            for (Gid g : p.gids()) {
                out.printf("    gid[%d]  %s  %-24s %s%n", g.index(), g.hex(), g.text(), g.type());
            }
        }
    }
}
