package org.rdmapanama.nettybench;

import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import picocli.CommandLine.Option;

import java.net.InetAddress;
import java.util.List;

/** What a server and its client agree on: the sides, the device, the ports and the RDMA options. */
final class Endpoint {
    @Option(names = "--side", paramLabel = "SIDE", split = ",", defaultValue = "netty-rdma",
            converter = SideConverter.class, description = {
            "netty-rdma (default), netty-epoll, channel, grpc-rdma, grpc-epoll, or a list of them:",
            "one process serves (or measures) each side given, a case at a time, interleaved"})
    List<Side> sides;

    @Option(names = {"-d", "--device"}, paramLabel = "DEV",
            description = "the RDMA device (epoll sides: TCP on its interface); default: RDMA_DEVICE or the selection's")
    String device;

    @Option(names = "--transport", paramLabel = "T", description = "pick the device by transport (roce, iwarp, ...)")
    String transport;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", defaultValue = "" + Side.BASE_PORT, description = {
            "the first side's port (default 18600); a side listens at PORT + its offset: netty-rdma 0, channel 1,",
            "grpc-rdma 2, netty-epoll 3, grpc-epoll 4"})
    int port;

    @Option(names = "--srq", paramLabel = "N", defaultValue = "1024", description = {
            "RDMA sides: one shared receive queue of N receives per loop (default 1024; 0: none).",
            "siw0 opens at most 7 QPs a process without one (docs/results/2026-12-07-channel-scale.md)"})
    int srq;

    @Option(names = "--slot", paramLabel = "BYTES", description = {
            "RDMA sides: the channel's receive slot (default 8192); larger messages go by rendezvous"})
    Integer slot;

    @Option(names = "--address", paramLabel = "ADDR",
            description = "epoll sides: the address to listen on and the client's default server (default: the device's interface)")
    String address;

    int port(Side side) {
        return port + side.portOffset;
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
        ChannelOptions o = ChannelOptions.defaults().withSharedReceives(srq);
        return slot != null ? o.withSlotSize(slot) : o;
    }

    /** Where {@code side} listens: the selected device's interface address, or --address for an epoll side. */
    InetAddress address(Side side) throws Exception {
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
