package org.rdmapanama.channel;

/**
 * How a {@link ChannelGroup} sizes its channels, buffers and threads.
 *
 * @param window         messages a sender may have in flight before the receiver gives buffers back; the
 *                       receiver posts 2 receives more (the sender's last credit, kept for a REQUEST, and the
 *                       slot of an ANSWER: docs/guide/channels.md#credits)
 * @param slotSize       bytes of one receive slot, the 16-byte header included: messages up to
 *                       {@code slotSize - 16} bytes go eagerly (one Send), larger ones by rendezvous (an RDMA
 *                       Read by the receiver)
 * @param maxMessageSize the largest message a channel sends or accepts
 * @param loops          event-loop threads, each with one completion queue shared by its channels (0: only
 *                       {@link ChannelGroup#newDrivenLoop() driven loops})
 * @param busyPollNanos  how long an idle loop keeps polling before it sleeps on the completion channel
 * @param sendQueueLimit sends a channel queues while its window is empty, before {@code send} refuses
 * @param cqSize         completion queue entries of each loop; bounds the channels a loop takes
 * @param inlineSize     inline data asked of each queue pair (the device may grant less)
 * @param sharedReceives 0: each channel posts its receives on its own queue pair; otherwise the depth of one
 *                       shared receive queue per loop that its channels' queue pairs share, which bounds the
 *                       loop's channels to {@code sharedReceives / (window + 2)} (every credit stays backed by a
 *                       posted receive). On iWARP (siw) a QP without a receive queue maps one page less.
 * @param keepaliveNanos 0: off; otherwise a channel that posted nothing for this long sends a CREDIT, so that
 *                       a peer or link gone silent fails it (the send's retries run out) rather than going unseen
 */
public record ChannelOptions(int window, int slotSize, int maxMessageSize, int loops, long busyPollNanos,
                             int sendQueueLimit, int cqSize, int inlineSize, int sharedReceives,
                             long keepaliveNanos) {
    public ChannelOptions {
        check("window", window, 3, 4096);
        check("slotSize", slotSize, 64, 1 << 24);
        if (Integer.bitCount(slotSize) != 1) {
            throw new IllegalArgumentException("slotSize must be a power of two, got " + slotSize);
        }
        check("maxMessageSize", maxMessageSize, 1, 1 << 30);
        check("loops", loops, 0, 256);
        if (busyPollNanos < 0) {
            throw new IllegalArgumentException("busyPollNanos must not be negative, got " + busyPollNanos);
        }
        check("sendQueueLimit", sendQueueLimit, 1, 1 << 20);
        check("cqSize", cqSize, 16, 1 << 22);
        check("inlineSize", inlineSize, 0, 4096);
        if (sharedReceives != 0 && sharedReceives < window + 2) {
            throw new IllegalArgumentException("sharedReceives must be 0 (no SRQ) or at least window + 2 = "
                    + (window + 2) + " (one channel's receives), got " + sharedReceives);
        }
        check("sharedReceives", sharedReceives, 0, 1 << 24);
        if (keepaliveNanos != 0 && keepaliveNanos < 1_000_000) {
            throw new IllegalArgumentException("keepaliveNanos must be 0 (off) or at least 1 ms, got " + keepaliveNanos);
        }
    }

    /** Whether the channels of a loop share one receive queue. */
    public boolean sharesReceives() {
        return sharedReceives > 0;
    }

    private static void check(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be " + min + ".." + max + ", got " + v);
        }
    }

    /** 32-message window of 8 KiB slots, 64 MiB messages, one loop polling 50 µs before it sleeps. */
    public static ChannelOptions defaults() {
        return new ChannelOptions(32, 8192, 64 << 20, 1, 50_000, 1024, 16384, 64, 0, 0);
    }

    /** The largest message that goes eagerly. */
    public int eagerLimit() {
        return slotSize - Wire.HEADER;
    }

    public ChannelOptions withWindow(int v) {
        return new ChannelOptions(v, slotSize, maxMessageSize, loops, busyPollNanos, sendQueueLimit, cqSize, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withSlotSize(int v) {
        return new ChannelOptions(window, v, maxMessageSize, loops, busyPollNanos, sendQueueLimit, cqSize, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withMaxMessageSize(int v) {
        return new ChannelOptions(window, slotSize, v, loops, busyPollNanos, sendQueueLimit, cqSize, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withLoops(int v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, v, busyPollNanos, sendQueueLimit, cqSize, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withBusyPollNanos(long v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, loops, v, sendQueueLimit, cqSize, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withSendQueueLimit(int v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, loops, busyPollNanos, v, cqSize, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withCqSize(int v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, loops, busyPollNanos, sendQueueLimit, v, inlineSize, sharedReceives, keepaliveNanos);
    }

    public ChannelOptions withInlineSize(int v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, loops, busyPollNanos, sendQueueLimit, cqSize, v, sharedReceives, keepaliveNanos);
    }

    /** One shared receive queue of {@code v} receives per loop (0: none, each QP has its own). */
    public ChannelOptions withSharedReceives(int v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, loops, busyPollNanos, sendQueueLimit, cqSize,
                inlineSize, v, keepaliveNanos);
    }

    /** Keepalive after {@code v} ns without a post (0: none). */
    public ChannelOptions withKeepaliveNanos(long v) {
        return new ChannelOptions(window, slotSize, maxMessageSize, loops, busyPollNanos, sendQueueLimit, cqSize,
                inlineSize, sharedReceives, v);
    }
}
