package org.rdmapanama.device;

import org.rdmapanama.error.NoSuchDeviceException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The device, port and GID a configuration picked. {@code gidIndex} is -1
 * when packets need no GRH (InfiniBand within a subnet: LID addressing).
 */
public record Selection(RdmaDevice device, Port port, Transport transport, int gidIndex, Gid gid) {

    /**
     * The IP address of the network interface this port is bound to (IPv4
     * first): what rdma_cm needs to bind or connect on this device, since it
     * picks the device by address. Found from the GID table's interface index, or for iWARP
     * from the MAC its GID starts with.
     *
     * @throws NoSuchDeviceException when the port has no IP interface (plain InfiniBand without IPoIB)
     */
    public java.net.InetAddress ipAddress() throws NoSuchDeviceException {
        try {
            for (Gid g : port.gids()) {
                java.net.NetworkInterface nif = g.ifindex() > 0 ? java.net.NetworkInterface.getByIndex(g.ifindex())
                        : null;
                // iWARP GID tables carry no interface index; their GID starts with the MAC (siw, cxgb4, irdma).
                if (nif == null && transport == Transport.IWARP) {
                    nif = byMac(java.util.Arrays.copyOf(g.raw(), 6));
                }
                java.util.Optional<java.net.InetAddress> a = nif == null ? java.util.Optional.empty() : address(nif);
                if (a.isPresent()) {
                    return a.get();
                }
            }
        } catch (java.net.SocketException e) {
            throw new NoSuchDeviceException("cannot list the network interfaces of " + device.name() + ": " + e);
        }
        throw new NoSuchDeviceException(device.name() + " port " + port.number()
                + " has no network interface with an IP address; rdma_cm needs one to pick the device");
    }

    private static java.net.NetworkInterface byMac(byte[] mac) throws java.net.SocketException {
        for (java.net.NetworkInterface nif : java.net.NetworkInterface.networkInterfaces().toList()) {
            if (java.util.Arrays.equals(nif.getHardwareAddress(), mac)) {
                return nif;
            }
        }
        return null;
    }

    /** IPv4 first, else a routable IPv6 address. */
    private static java.util.Optional<java.net.InetAddress> address(java.net.NetworkInterface nif) {
        java.util.List<java.net.InetAddress> all = nif.inetAddresses().toList();
        return all.stream().filter(a -> a instanceof java.net.Inet4Address).findFirst()
                .or(() -> all.stream().filter(a -> !a.isLinkLocalAddress()).findFirst());
    }

    /** True when the peer is addressed by LID (InfiniBand), false when by GID (RoCE). */
    public boolean usesLid() {
        return transport == Transport.INFINIBAND;
    }

    /**
     * Picks the device, port and GID that {@code config} asks for among {@code devices}. With a
     * transport preference ({@code rocev2,iwarp}), the first transport that some device serves wins.
     *
     * @throws NoSuchDeviceException naming what was asked, every device that exists with its
     *                               transport, and why each was rejected (for each preferred transport)
     */
    public static Selection select(RdmaConfig config, List<RdmaDevice> devices) throws NoSuchDeviceException {
        List<Transport> wanted = config.transports();
        List<String> rejected = new ArrayList<>();
        for (int i = 0; i < Math.max(1, wanted.size()); i++) {
            Transport t = wanted.isEmpty() ? null : wanted.get(i);
            List<String> why = new ArrayList<>();
            Selection s = selectOne(config, t, devices, why);
            if (s != null) {
                return s;
            }
            rejected.add(wanted.size() > 1 ? "for " + t.displayName() + ": " + String.join("; ", why)
                    : String.join("; ", why));
        }
        String asked = config.toString() + (config.origins().isEmpty() ? "" : " " + config.origins().values());
        throw new NoSuchDeviceException("no RDMA device matches " + asked + "; "
                + (devices.isEmpty() ? "there are no RDMA devices" : "devices: " + String.join("; ", rejected)));
    }

    /** The first port of {@code devices} that serves {@code transport} (any if null), or null with the reasons in {@code rejected}. */
    private static Selection selectOne(RdmaConfig config, Transport transport, List<RdmaDevice> devices,
                                       List<String> rejected) {
        for (RdmaDevice d : devices) {
            if (config.device().isPresent() && !config.device().get().equals(d.name())) {
                rejected.add(d.name() + " (" + d.transport().displayName() + "): not the device asked for");
                continue;
            }
            List<Port> candidates = config.port().isPresent()
                    ? d.ports().stream().filter(p -> p.number() == config.port().get()).toList()
                    : d.ports();
            if (candidates.isEmpty()) {
                rejected.add(d.name() + " (" + d.transport().displayName() + "): has no port " + config.port().get()
                        + " (ports 1.." + d.ports().size() + ")");
                continue;
            }
            String why = null;
            for (Port p : candidates) {
                if (transport != null && !supports(p, transport)) {
                    why = "port " + p.number() + " is " + p.transport().displayName() + ", not "
                            + transport.displayName();
                    continue;
                }
                if (p.state() != PortState.ACTIVE) {
                    why = "port " + p.number() + " is " + p.state() + ", not ACTIVE";
                    continue;
                }
                Transport t = transport != null ? transport : p.transport();
                Optional<Gid> gid;
                try {
                    gid = pickGid(p, t, config.gid());
                } catch (IllegalArgumentException e) {
                    why = e.getMessage();
                    continue;
                }
                return new Selection(d, p, t, gid.map(Gid::index).orElse(-1), gid.orElse(null));
            }
            rejected.add(d.name() + " (" + d.transport().displayName() + "): " + why);
        }
        return null;
    }

    /** A RoCE port with both GID types serves RoCEv1 too. */
    private static boolean supports(Port p, Transport t) {
        if (p.transport() == t) {
            return true;
        }
        return t == Transport.ROCE_V1 && p.transport() == Transport.ROCE_V2
                && p.gids().stream().anyMatch(g -> g.type() == GidType.ROCE_V1);
    }

    private static Optional<Gid> pickGid(Port p, Transport t, String spec) {
        if (!spec.startsWith("auto")) {
            int index = Integer.parseInt(spec);
            return Optional.of(p.gids().stream().filter(g -> g.index() == index).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("port " + p.number() + " has no valid GID at index "
                            + index + " (valid: " + p.gids().stream().map(g -> g.index() + " " + g.type()).toList() + ")")));
        }
        return switch (t) {
            // LID addressing within a subnet: no GRH, so no GID.
            case INFINIBAND -> Optional.empty();
            // iWARP routes by IP through rdma_cm; the GID is informational.
            case IWARP -> p.gids().stream().findFirst();
            case ROCE_V2, ROCE_V1 -> {
                GidType type = t == Transport.ROCE_V2 ? GidType.ROCE_V2 : GidType.ROCE_V1;
                boolean ipv6First = spec.equals("auto-ipv6");
                Optional<Gid> preferred = p.gids().stream()
                        .filter(g -> g.type() == type && g.isIpv4() != ipv6First).findFirst();
                Optional<Gid> other = p.gids().stream().filter(g -> g.type() == type).findFirst();
                Optional<Gid> chosen = preferred.or(() -> other);
                if (chosen.isEmpty()) {
                    throw new IllegalArgumentException("port " + p.number() + " has no " + type + " GID (it has "
                            + p.gids().stream().map(g -> g.index() + " " + g.type()).toList() + ")");
                }
                yield chosen;
            }
        };
    }
}
