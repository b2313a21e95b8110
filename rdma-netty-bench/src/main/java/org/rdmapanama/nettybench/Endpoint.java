package org.rdmapanama.nettybench;

import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import picocli.CommandLine.Option;

import java.net.InetAddress;

/** What a server and its client agree on: the side, the device, the port and the RDMA options. */
final class Endpoint {
    @Option(names = "--side", paramLabel = "SIDE", defaultValue = "netty-rdma", converter = SideConverter.class,
            description = "netty-rdma (default), netty-epoll, channel, grpc-rdma or grpc-epoll")
    Side side;

    @Option(names = {"-d", "--device"}, paramLabel = "DEV",
            description = "the RDMA device (epoll sides: TCP on its interface); default: RDMA_DEVICE or the selection's")
    String device;

    @Option(names = "--transport", paramLabel = "T", description = "pick the device by transport (roce, iwarp, ...)")
    String transport;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT",
            description = "default per side: 18600 netty-rdma, 18601 channel, 18602 grpc-rdma, 18603 netty-epoll, 18604 grpc-epoll")
    Integer port;

    @Option(names = "--srq", paramLabel = "N", defaultValue = "1024", description = {
            "RDMA sides: one shared receive queue of N receives per loop (default 1024; 0: none).",
            "siw0 opens at most 7 QPs a process without one (docs/results/2026-12-07-channel-scale.md)"})
    int srq;

    @Option(names = "--address", paramLabel = "ADDR",
            description = "epoll sides: the address to listen on and the client's default server (default: the device's interface)")
    String address;

    int port() {
        return port != null ? port : side.defaultPort;
    }

    RdmaConfig config() {
        RdmaConfig c = RdmaConfig.load();
        if (transport != null) {
            c = c.withTransport(transport);
        }
        if (device != null) {
            c = c.withDevice(device);
        }
        return c;
    }

    /** The channel's defaults (window 32, 8 KiB slots, 50 us busy-poll) with the SRQ; the same on every RDMA side. */
    ChannelOptions channelOptions() {
        return ChannelOptions.defaults().withSharedReceives(srq);
    }

    /** The selected device's interface address: where servers listen, and the client's default server. */
    InetAddress address() throws Exception {
        if (address != null && !side.rdma) {
            return InetAddress.getByName(address);
        }
        return Selection.select(config(), RdmaDevices.list()).ipAddress();
    }

    static final class SideConverter implements picocli.CommandLine.ITypeConverter<Side> {
        @Override
        public Side convert(String value) {
            return Side.of(value);
        }
    }
}
