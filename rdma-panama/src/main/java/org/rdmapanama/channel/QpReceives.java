package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.ReceiveRequest;

import java.lang.foreign.MemorySegment;

/** A channel's {@code window + 2} slots, posted on its own queue pair and reposted in one chain per flush. */
final class QpReceives extends Receives {
    private final MessageChannel channel;
    private final ChannelLoop loop;
    private final ReceiveSide side;
    private final QueuePair qp;
    private final int slotSize;
    private final MessageBuffer[] slots;
    private final Message[] slotMessages;
    private final ReceiveRequest recvBatch;
    private final int[] repost;
    private int repostCount;
    private int lastRecvChain = 1;
    private int recvOutstanding;
    private ConfinedPoster poster;

    /** Takes a slot of the pool for every receive; gives them back if that fails. */
    QpReceives(MessageChannel channel, ChannelLoop loop, ReceiveSide side, QueuePair qp, BufferPool pool,
               ChannelOptions options, int receives) throws RdmaException {
        this.channel = channel;
        this.loop = loop;
        this.side = side;
        this.qp = qp;
        this.slotSize = options.slotSize();
        this.slots = new MessageBuffer[receives];
        this.slotMessages = new Message[receives];
        this.repost = new int[receives];
        this.recvBatch = qp.newReceiveRequest(receives, 1);
        boolean ok = false;
        try {
            for (int i = 0; i < receives; i++) {
                MessageBuffer b = pool.allocate(options.eagerLimit());
                slots[i] = b;
                slotMessages[i] = new Message(channel, i, b.payloadView());
                recvBatch.wrId(i, loop.wrId(channel, MessageChannel.KIND_RECV, i))
                        .sge(i, 0, b.region, b.offset, slotSize);
            }
            recvBatch.chain(receives);
            lastRecvChain = receives;
            recvOutstanding = receives;
            ok = true;
        } finally {
            if (!ok) {
                recycle();
            }
        }
    }

    @Override
    MemorySegment slot(int slot) {
        return slots[slot].whole;
    }

    @Override
    Message message(int slot) {
        return slotMessages[slot];
    }

    @Override
    void postInitial() throws RdmaException {
        qp.postRecv(recvBatch);
    }

    @Override
    void activate(ConfinedPoster poster) {
        this.poster = poster;
    }

    // The credit is counted now: the channel's flush posts the reposts before anything carries it.
    @Override
    void repost(int slot, boolean credited) {
        repost[repostCount++] = slot;
        if (credited) {
            side.credited(1);
        }
        channel.markDirty();
    }

    @Override
    void postReposts() throws RdmaException {
        int n = repostCount;
        if (n == 0) {
            return;
        }
        for (int k = 0; k < n; k++) {
            int slot = repost[k];
            MessageBuffer b = slots[slot];
            recvBatch.wrId(k, loop.wrId(channel, MessageChannel.KIND_RECV, slot))
                    .sge(k, 0, b.region, b.offset, slotSize);
        }
        if (n != lastRecvChain) {
            recvBatch.chain(n);
            lastRecvChain = n;
        }
        poster.postRecv(recvBatch);
        repostCount = 0;
        recvOutstanding += n;
    }

    @Override
    void completed() {
        recvOutstanding--;
    }

    @Override
    int outstanding() {
        return recvOutstanding;
    }

    @Override
    boolean shared() {
        return false;
    }

    @Override
    void releasedAfterClose(int slot) {
        slots[slot].recycle();
        slots[slot] = null;
    }

    @Override
    void recycle() {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null && (slotMessages[i] == null || !slotMessages[i].isHeld())) {
                slots[i].recycle();
                slots[i] = null;
            }
        }
    }
}
