package org.rdmapanama.bench.echo;

import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.device.RdmaConfig;

import java.lang.foreign.MemorySegment;

/** The channel guide's example server: sends every message back. RDMA_TRANSPORT / RDMA_DEVICE pick the device. */
public final class EchoServer {
    public static void main(String[] args) throws Exception {
        try (ChannelGroup group = ChannelGroup.open(RdmaConfig.load(), ChannelOptions.defaults());
             ChannelServer server = group.listen(7471, (channel, message) -> {
                 MessageBuffer reply = channel.allocate(message.length());
                 MemorySegment.copy(message.segment(), 0, reply.segment(), 0, message.length());
                 channel.send(reply, message.length()); // no copy: the buffer is registered
                 message.release();                     // reposts the receive, returns a credit
             })) {
            System.out.println("echo server on " + server.address());
            server.closeFuture().join();
        }
    }
}
