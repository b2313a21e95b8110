package org.rdmapanama.bench;

import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.device.Gid;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code rdma-bench devices}: what ibv_devinfo shows, plus the transport each device is classified as.
 * With queries ({@code --transport DEV}, {@code --address DEV}, {@code --perftest-flags DEV}) it prints
 * one line per query instead, in the order asked: the lab's scripts read what a device is from the
 * runtime's selection rather than work it out again from sysfs.
 */
final class DevicesCommand {
    private DevicesCommand() {}

    private static final String USAGE_LINE =
            "usage: rdma-bench devices [-v] | [--transport DEV] [--address DEV] [--perftest-flags DEV]...";

    /** A machine-readable question about one device; its answer is one line. */
    enum Ask {
        /** The transport's display name: RoCEv2, RoCEv1, iWARP or InfiniBand. */
        TRANSPORT("--transport"),
        /** The IP address (IPv4 first) of the device's interface: the address rdma_cm binds and connects to. */
        ADDRESS("--address"),
        /** What perftest needs to connect over the transport: -R (iWARP), -x GID (RoCE), nothing (InfiniBand). */
        PERFTEST_FLAGS("--perftest-flags");

        final String option;

        Ask(String option) {
            this.option = option;
        }

        static Ask of(String option) {
            for (Ask a : values()) {
                if (a.option.equals(option)) {
                    return a;
                }
            }
            return null;
        }
    }

    record Query(Ask ask, String device) {}

    /** What the command line asks for: the listing (verbose or not), or queries. */
    record Options(boolean verbose, List<Query> queries) {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("devices", args, out, err, DevicesCommand::parse, u -> u.println(USAGE_LINE),
                o -> list(o, out));
    }

    /**
     * Parsed by hand, behind {@link CliArgs#run} as perftest's and rping's flags are: queries keep
     * the order they were asked in, one answer line each. Null for {@code -h}.
     */
    static Options parse(String[] args) {
        boolean verbose = false;
        List<Query> queries = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                value = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            Ask ask = Ask.of(a);
            if (a.equals("-h") || a.equals("--help")) {
                return null;
            } else if (a.equals("-v") || a.equals("--verbose")) {
                verbose = true;
            } else if (ask == null) {
                throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
            } else {
                if (value == null && i + 1 < args.length && !args[i + 1].startsWith("-")) {
                    value = args[++i];
                }
                if (value == null || value.isEmpty()) {
                    throw new IllegalArgumentException(a + " needs a device name");
                }
                queries.add(new Query(ask, value));
            }
        }
        if (verbose && !queries.isEmpty()) {
            throw new IllegalArgumentException("-v is for the listing; queries print one line each");
        }
        return new Options(verbose, queries);
    }

    /** The listing, or the queries' answers; no device, or no such device, is CliArgs' usage status. */
    private static int list(Options o, PrintStream out) throws RdmaException {
        List<RdmaDevice> devices = RdmaDevices.require();
        if (!o.queries().isEmpty()) {
            // All answered before any is printed: a script reading the lines never gets half of them.
            answer(o.queries(), devices).forEach(out::println);
            return CliArgs.OK;
        }
        out.println(devices.size() + (devices.size() == 1 ? " RDMA device" : " RDMA devices"));
        for (RdmaDevice d : devices) {
            print(d, o.verbose(), out);
        }
        return CliArgs.OK;
    }

    /** Each query's one-line answer, in order, from the device and port the runtime's selection picks. */
    static List<String> answer(List<Query> queries, List<RdmaDevice> devices) throws NoSuchDeviceException {
        List<String> lines = new ArrayList<>();
        for (Query q : queries) {
            Selection s = select(q.device(), devices);
            lines.add(switch (q.ask()) {
                case TRANSPORT -> s.transport().displayName();
                case ADDRESS -> s.ipAddress().getHostAddress();
                case PERFTEST_FLAGS -> perftestFlags(s);
            });
        }
        return lines;
    }

    private static Selection select(String name, List<RdmaDevice> devices) throws NoSuchDeviceException {
        if (devices.stream().noneMatch(d -> d.name().equals(name))) {
            throw new NoSuchDeviceException("no RDMA device '" + name + "'; there are: " + devices.stream()
                    .map(d -> d.name() + " (" + d.transport().displayName() + ")").collect(Collectors.joining(", ")));
        }
        return Selection.select(RdmaConfig.any().withDevice(name), devices);
    }

    /**
     * perftest connects iWARP only through rdma_cm (-R); on RoCE it exchanges GIDs out of band and needs
     * the index of the GID whose address the peer reaches (-x), IPv4 as the address given to the client;
     * InfiniBand uses LIDs and needs neither.
     */
    static String perftestFlags(Selection s) throws NoSuchDeviceException {
        Transport t = s.transport();
        return switch (t) {
            case IWARP -> "-R";
            case INFINIBAND -> "";
            case ROCE_V2, ROCE_V1 -> {
                Gid g = s.gid();
                if (g == null || !g.isIpv4()) {
                    throw new NoSuchDeviceException(s.device().name() + " port " + s.port().number() + " has no "
                            + t.displayName() + " GID with an IPv4 address (its GIDs: "
                            + s.port().gids().stream().map(x -> x.index() + " " + x.text() + " " + x.type()).toList()
                            + ")");
                }
                yield "-x " + s.gidIndex();
            }
        };
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
