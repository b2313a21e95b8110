package org.rdmapanama.bench.echo;

import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.device.RdmaConfig;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** The channel guide's example client: 4 channels, 16 B to 64 KiB, every reply checked. */
public final class EchoClient {
    public static void main(String[] args) throws Exception {
        var server = new InetSocketAddress(args[0], 7471);
        var replies = new ArrayBlockingQueue<byte[]>(16);
        try (ChannelGroup group = ChannelGroup.open(RdmaConfig.load(), ChannelOptions.defaults())) {
            List<MessageChannel> channels = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                channels.add(group.connect(server, (channel, message) -> {
                    replies.add(message.segment().asSlice(0, message.length()).toArray(JAVA_BYTE));
                    message.release();
                }).get());
            }
            Random random = new Random(42);
            for (int size = 16; size <= 65536; size *= 4) {
                for (MessageChannel channel : channels) {
                    byte[] request = new byte[size];
                    random.nextBytes(request);
                    MessageBuffer buffer = channel.allocate(size);
                    MemorySegment.copy(request, 0, buffer.segment(), JAVA_BYTE, 0, size);
                    channel.send(buffer, size);
                    if (!Arrays.equals(request, replies.poll(10, TimeUnit.SECONDS))) {
                        throw new IllegalStateException("the echo of " + size + " bytes differs or did not come");
                    }
                }
                System.out.println(size + " B echoed on " + channels.size() + " channels");
            }
            for (MessageChannel channel : channels) {
                channel.close();
                channel.closeFuture().join();
            }
        }
    }
}
