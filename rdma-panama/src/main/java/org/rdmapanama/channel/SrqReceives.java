package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.QueuePair;

import java.lang.foreign.MemorySegment;

/**
 * A channel's share of its loop's {@link SharedReceives}: {@code window + 2}
 * receives promised to its peer, posted to the SRQ when the channel joins.
 * The slots a message of this channel arrived in are this channel's until
 * they are given back.
 */
final class SrqReceives extends Receives {
    private final MessageChannel channel;
    private final SharedReceives srq;
    private final ReceiveSide side;
    private final QueuePair qp;
    final int receives;
    /** Slots this channel's messages took and has not given back: never more than its receives. */
    int taken;
    private boolean joined;

    SrqReceives(MessageChannel channel, SharedReceives srq, ReceiveSide side, QueuePair qp, int receives) {
        this.channel = channel;
        this.srq = srq;
        this.side = side;
        this.qp = qp;
        this.receives = receives;
    }

    MessageChannel channel() {
        return channel;
    }

    ReceiveSide side() {
        return side;
    }

    @Override
    MemorySegment slot(int slot) {
        return srq.slot(slot);
    }

    @Override
    Message message(int slot) {
        return srq.message(slot, channel);
    }

    @Override
    void postInitial() throws RdmaException {
        srq.join(this, qp.qpNumber());
        joined = true;
    }

    @Override
    void repost(int slot, boolean credited) {
        srq.giveBack(this, slot, credited);
    }

    @Override
    void postReposts() {
        // the loop posts the SRQ's reposts before it flushes any channel
    }

    @Override
    void completed() {
    }

    @Override
    int outstanding() {
        return 0; // an SRQ's receives do not flush with a QP: nothing to wait for
    }

    @Override
    boolean shared() {
        return true;
    }

    @Override
    void releasedAfterClose(int slot) {
        try {
            srq.orphanReleased(slot);
        } catch (RdmaException e) {
            refused(e);
        }
    }

    @Override
    void recycle() {
        if (joined) {
            joined = false;
            try {
                srq.leave(this, qp.qpNumber());
            } catch (RdmaException e) {
                refused(e);
            }
        }
    }

    // The SRQ refused a repost: the loop's next post fails too, and takes every channel down with a clear cause.
    private void refused(RdmaException e) {
        org.slf4j.LoggerFactory.getLogger(SrqReceives.class).warn("{}: the shared receive queue refused a slot: {}",
                channel.name(), e.toString());
    }
}
