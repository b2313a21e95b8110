package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.message.RequestLatencies;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.channel.MessageHandler;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.rdmapanama.bench.message.MessageBench.ECHO;

/**
 * The client of {@code channel_rpc}: requests of one size over C channels, W outstanding on each. Every
 * channel runs on the group's one loop thread, the only thread that touches this driver's state between
 * {@link #run} and its future: it issues W requests per channel, and for each reply records the time since
 * its request was issued (replies come in the order of the requests, so the issue times are a ring of W per
 * channel) and issues the next request, until n replies came back on every channel. Nothing is allocated per
 * request beyond the channel's own pool buffer.
 */
final class ChannelRpcDriver implements MessageHandler {
    /** One channel's requests; its {@link MessageChannel#attachment()}. */
    private static final class Lane {
        final MessageChannel channel;
        final long[] issued;
        long sent;
        long received;

        Lane(MessageChannel channel, int outstanding) {
            this.channel = channel;
            this.issued = new long[outstanding];
        }
    }

    private final int outstanding;
    private final RequestLatencies latencies = new RequestLatencies();
    private int size;
    private long perChannel;
    private int running;
    private long start;
    private CompletableFuture<Long> done;

    ChannelRpcDriver(int outstanding) {
        this.outstanding = outstanding;
    }

    /** The latencies of the last run; read them once its future completed. */
    RequestLatencies latencies() {
        return latencies;
    }

    /** {@code n} requests of {@code bytes} on each channel; completes with the nanoseconds from first issue to last reply. */
    CompletableFuture<Long> run(List<MessageChannel> channels, int bytes, long n) {
        CompletableFuture<Long> f = new CompletableFuture<>();
        channels.getFirst().execute(() -> {
            size = bytes;
            perChannel = n;
            running = channels.size();
            done = f;
            latencies.reset();
            start = System.nanoTime();
            for (MessageChannel ch : channels) {
                if (!(ch.attachment() instanceof Lane)) {
                    ch.attach(new Lane(ch, outstanding));
                }
                Lane lane = (Lane) ch.attachment();
                lane.sent = 0;
                lane.received = 0;
                for (int i = 0; i < outstanding && lane.sent < perChannel; i++) {
                    issue(lane);
                }
            }
        });
        return f;
    }

    private void issue(Lane lane) {
        try {
            lane.issued[(int) (lane.sent % outstanding)] = System.nanoTime();
            MessageBuffer b = lane.channel.allocate(size);
            b.segment().set(JAVA_INT_UNALIGNED, 0, ECHO);
            lane.channel.send(b, size);
            lane.sent++;
        } catch (Exception e) {
            done.completeExceptionally(e);
        }
    }

    @Override
    public void onMessage(MessageChannel channel, Message m) {
        long now = System.nanoTime();
        m.release();
        Lane lane = (Lane) channel.attachment();
        if (done == null || done.isDone() || lane == null || lane.received >= lane.sent) {
            return; // a failed run's stragglers
        }
        latencies.record(now - lane.issued[(int) (lane.received % outstanding)]);
        lane.received++;
        if (lane.sent < perChannel) {
            issue(lane);
        } else if (lane.received == perChannel && --running == 0) {
            done.complete(now - start);
        }
    }

    @Override
    public void onClose(MessageChannel channel, Throwable cause) {
        if (done != null && !done.isDone()) {
            done.completeExceptionally(cause != null ? cause : new IllegalStateException(channel + " closed"));
        }
    }
}
