package org.rdmapanama.netty;

import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.LabDevices;

/** The transport's side of rdma-panama's test kit: a transport on the lab device picked for {@code t}. */
public final class NettyLab {
    private NettyLab() {}

    /** On the device selection picks for {@code t}; skips the test where there is none. */
    public static RdmaTransport open(Transport t, ChannelOptions options) throws RdmaException {
        LabDevices.select(t);
        return RdmaTransport.open(LabDevices.config(t), options);
    }
}
