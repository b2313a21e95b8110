package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.QueuePair;

import java.lang.foreign.MemorySegment;

/**
 * A channel's receives, on its loop thread: the slots posted for the peer
 * and their batched repost, the credits owed back, the checks on every
 * message that arrives, the regions the peer advertised, and delivery in
 * the order sent (an eager message waits behind a rendezvous still being
 * read). Its {@link Message}s are made once, not per message.
 */
final class ReceiveSide {
    /**
     * Registered chunks a peer may advertise for rendezvous. Its pool grows with what its user queues
     * (a stream of 64 KiB messages went past 64 chunks), so the table grows too, on ADVERTISE only.
     */
    static final int MAX_PEER_REGIONS = 4096;

    private final MessageChannel channel;
    private final ChannelLoop loop;
    private final MessageHandler handler;
    private final BufferPool pool;
    private final ChannelOptions options;
    private final SendSide sender;

    // Slots posted for the peer.
    private final int receives;
    private final Receives slots;
    private int returnable; // reposted since the last header that said so
    private boolean peerRequested; // the peer waits for credits: return them even below half the receives
    private final int[] early; // (slot, bytes) pairs that came before activation
    private int earlyCount;
    private boolean peerSaidBye;
    private boolean peerShut;

    // Rendezvous, receiving, and delivery in order.
    private long[] peerRegionAddress = new long[16];
    private long[] peerRegionLength = new long[16];
    private int[] peerRegionRkey = new int[16];
    private int peerRegions;
    private final Message[] rendezvousFree;
    private int rendezvousFreeCount;
    /** RNDVs whose DONE is not sent yet: what the peer's tokens count, at most a window. */
    private int rendezvousUndone;
    private final Message[] delivery;
    private int deliveryHead, deliveryCount;
    private final Message[] readsWaiting; // for room in the send queue
    private int readsWaitingHead, readsWaitingCount;

    ReceiveSide(MessageChannel channel, ChannelLoop loop, QueuePair qp, MessageHandler handler, BufferPool pool,
                ChannelOptions options, SendSide sender) throws RdmaException {
        this.channel = channel;
        this.loop = loop;
        this.handler = handler;
        this.pool = pool;
        this.options = options;
        this.sender = sender;
        this.receives = options.window() + 2; // the credits given, and the slot of an ANSWER
        this.early = new int[2 * receives];
        this.rendezvousFree = new Message[options.window()];
        for (int i = 0; i < rendezvousFree.length; i++) {
            rendezvousFree[rendezvousFreeCount++] = new Message(channel, -1, null);
        }
        this.delivery = new Message[receives + options.window()];
        this.readsWaiting = new Message[options.window()];
        this.slots = loop.sharedReceives != null
                ? new SrqReceives(channel, loop.sharedReceives, this, qp, receives)
                : new QpReceives(channel, loop, this, qp, pool, options, receives);
    }

    /** Every slot, posted before the channel is connected (the peer may send as soon as it is). */
    void postInitial() throws RdmaException {
        slots.postInitial();
    }

    /** Connected: reposts go through the channel's poster from here on. */
    void activate(ConfinedPoster poster) {
        slots.activate(poster);
    }

    /** {@code n} more receives are posted for the peer: credits for the next header out. */
    void credited(int n) {
        returnable += n;
        channel.markDirty();
    }

    boolean sharedReceives() {
        return slots.shared();
    }

    /** Receives that completed before the channel was open are taken in, in the order they came. */
    void replayEarly() {
        for (int i = 0; i < earlyCount && channel.state() == MessageChannel.State.OPEN; i++) {
            onReceive(early[2 * i], early[2 * i + 1]);
        }
        earlyCount = 0;
    }

    int receives() {
        return receives;
    }

    int returnable() {
        return returnable;
    }

    boolean peerRequested() {
        return peerRequested;
    }

    /** The ANSWER to the peer's REQUEST is posted. */
    void answered() {
        peerRequested = false;
    }

    /** Up to {@code most} of the credits owed to the peer, for a header going out. */
    int takeReturnable(int most) {
        int give = Math.min(returnable, most);
        returnable -= give;
        return give;
    }

    int outstanding() {
        return slots.outstanding();
    }

    boolean peerSaidBye() {
        return peerSaidBye;
    }

    /** A receive completed; a failed one is the channel's to report. */
    void onCompletion(int slot, boolean success, int bytes) {
        slots.completed();
        if (success) {
            if (channel.state() == MessageChannel.State.CONNECTING) {
                early[2 * earlyCount] = slot;
                early[2 * earlyCount++ + 1] = bytes;
            } else {
                onReceive(slot, bytes);
            }
        }
    }

    /** Posts the slots given back since the last flush. */
    void postReposts() throws RdmaException {
        slots.postReposts();
    }

    private void onReceive(int slot, int bytes) {
        MessageChannel.State state = channel.state();
        if (state == MessageChannel.State.DRAINING || state == MessageChannel.State.CLOSED) {
            return; // not reposted: the slots are recycled when the channel finishes
        }
        MemorySegment s = slots.slot(slot);
        int type;
        try {
            type = Wire.check(s, bytes, options.slotSize());
            int c = Wire.credits(s);
            if (c != 0) {
                sender.credit(c);
                channel.markDirty();
            }
            int flags = Wire.flags(s);
            if (flags != 0 && type != Wire.CREDIT) {
                throw new ProtocolException("header flags 0x" + Integer.toHexString(flags) + " on a "
                        + Wire.typeName(type) + " message: only a CREDIT carries them");
            }
            if ((flags & Wire.FLAG_REQUEST) != 0) {
                if (peerRequested) {
                    throw new ProtocolException("a REQUEST while the last one is unanswered");
                }
                peerRequested = true;
                channel.markDirty();
            }
            if ((flags & Wire.FLAG_ANSWER) != 0) {
                sender.answered();
            }
            if (peerShut && (type == Wire.DATA || type == Wire.RNDV)) {
                throw new ProtocolException("a " + Wire.typeName(type) + " message after the peer's SHUT");
            }
            switch (type) {
                case Wire.DATA -> {
                    Message m = slots.message(slot);
                    m.length = bytes - Wire.HEADER;
                    m.ready = true;
                    deliver(m);
                }
                case Wire.CREDIT -> repost(slot, (flags & Wire.FLAG_ANSWER) == 0); // an ANSWER's slot is given by no credit
                case Wire.RNDV -> {
                    receiveRendezvous(s);
                    repost(slot, true);
                }
                case Wire.DONE -> {
                    sender.rendezvousDone(Wire.token(s));
                    repost(slot, true);
                }
                case Wire.ADVERTISE -> {
                    receiveAdvertise(s);
                    repost(slot, true);
                }
                case Wire.SHUT -> {
                    peerShut = true;
                    repost(slot, true);
                    channel.inputShutdown();
                }
                case Wire.BYE -> {
                    peerSaidBye = true; // the disconnect follows; nothing more arrives
                    channel.byeReceived();
                }
                default -> throw new ProtocolException("unknown message type " + type);
            }
        } catch (ProtocolException e) {
            channel.fail(new ProtocolException(channel.name() + ": " + e.getMessage()));
        } catch (RdmaException | RuntimeException e) {
            channel.fail(e);
        }
    }

    private void receiveAdvertise(MemorySegment s) throws ProtocolException {
        long address = s.get(Wire.U64, Wire.HEADER);
        long length = Integer.toUnsignedLong(s.get(Wire.U32, Wire.HEADER + 8));
        int rkey = s.get(Wire.U32, Wire.HEADER + 12);
        if (length == 0) {
            throw new ProtocolException("ADVERTISE of a region of 0 bytes");
        }
        if (peerRegions == MAX_PEER_REGIONS) {
            throw new ProtocolException("ADVERTISE of a region beyond the " + MAX_PEER_REGIONS + " a peer may name");
        }
        if (peerRegions == peerRegionRkey.length) {
            int n = Math.min(MAX_PEER_REGIONS, peerRegions * 2);
            peerRegionAddress = java.util.Arrays.copyOf(peerRegionAddress, n);
            peerRegionLength = java.util.Arrays.copyOf(peerRegionLength, n);
            peerRegionRkey = java.util.Arrays.copyOf(peerRegionRkey, n);
        }
        peerRegionAddress[peerRegions] = address;
        peerRegionLength[peerRegions] = length;
        peerRegionRkey[peerRegions++] = rkey;
    }

    /** Checks a RNDV against what the peer advertised, and queues its read and its place in delivery. */
    private void receiveRendezvous(MemorySegment s) throws RdmaException {
        long address = s.get(Wire.U64, Wire.HEADER);
        int rkey = s.get(Wire.U32, Wire.HEADER + 8);
        int r = s.get(Wire.U32, Wire.HEADER + 12);
        int length = Wire.length(s);
        int token = Wire.token(s);
        if (length <= options.eagerLimit() || length > options.maxMessageSize()) {
            throw new ProtocolException("RNDV length " + Integer.toUnsignedString(length) + " is not in "
                    + (options.eagerLimit() + 1) + ".." + options.maxMessageSize());
        }
        if (Integer.compareUnsigned(r, peerRegions) >= 0) {
            throw new ProtocolException("RNDV names region " + Integer.toUnsignedString(r) + ", and the peer advertised "
                    + peerRegions);
        }
        long offset = address - peerRegionAddress[r];
        if (peerRegionRkey[r] != rkey || Long.compareUnsigned(offset, peerRegionLength[r]) >= 0
                || Long.compareUnsigned(offset + length, peerRegionLength[r]) > 0) {
            throw new ProtocolException("RNDV of " + length + " bytes at 0x" + Long.toHexString(address) + " rkey 0x"
                    + Integer.toHexString(rkey) + " lies outside region " + r + " the peer advertised");
        }
        if (rendezvousUndone == rendezvousFree.length) {
            throw new ProtocolException("RNDV beyond the " + rendezvousFree.length + " outstanding a peer may have");
        }
        rendezvousUndone++;
        // Past a window of them only when the reader holds read messages, whose DONE went: more objects then.
        Message m = rendezvousFreeCount > 0 ? rendezvousFree[--rendezvousFreeCount] : new Message(channel, -1, null);
        m.buffer = pool.allocate(length);
        m.length = length;
        m.token = token;
        m.ready = false;
        m.remoteAddress = address;
        m.remoteKey = rkey;
        delivery[(deliveryHead + deliveryCount++) % delivery.length] = m;
        readsWaiting[(readsWaitingHead + readsWaitingCount++) % readsWaiting.length] = m;
        channel.markDirty();
    }

    boolean readWaiting() {
        return readsWaitingCount > 0;
    }

    /** The oldest rendezvous waiting to be read; the send side posts it. */
    Message nextRead() {
        Message m = readsWaiting[readsWaitingHead];
        readsWaiting[readsWaitingHead] = null;
        readsWaitingHead = (readsWaitingHead + 1) % readsWaiting.length;
        readsWaitingCount--;
        return m;
    }

    private void deliver(Message m) {
        if (deliveryCount > 0) {
            delivery[(deliveryHead + deliveryCount++) % delivery.length] = m;
            return;
        }
        handOver(m);
    }

    private void handOver(Message m) {
        m.hold();
        try {
            handler.onMessage(channel, m);
        } catch (Throwable t) {
            channel.fail(t);
        }
    }

    /** Hands over the messages at the head of delivery whose reads are done. */
    void drainDelivery() {
        while (deliveryCount > 0 && delivery[deliveryHead].ready && isLive()) {
            Message m = delivery[deliveryHead];
            delivery[deliveryHead] = null;
            deliveryHead = (deliveryHead + 1) % delivery.length;
            deliveryCount--;
            handOver(m);
        }
    }

    private boolean isLive() {
        MessageChannel.State state = channel.state();
        return state != MessageChannel.State.DRAINING && state != MessageChannel.State.CLOSED;
    }

    /** The user gave a message back (loop thread): its slot is posted again, or its buffer goes to the pool. */
    void released(Message m) {
        if (m.slot >= 0) {
            MessageChannel.State state = channel.state();
            if (state == MessageChannel.State.CLOSED) {
                slots.releasedAfterClose(m.slot); // the channel finished while the message was held
            } else if (state != MessageChannel.State.DRAINING) {
                repost(m.slot, true);
            }
            return;
        }
        recycleRendezvous(m);
    }

    /** A rendezvous message's buffer goes back to the pool, and the message to the free ones (a window of them). */
    private void recycleRendezvous(Message m) {
        if (m.buffer != null) {
            m.buffer.recycle();
            m.buffer = null;
        }
        if (rendezvousFreeCount < rendezvousFree.length) {
            rendezvousFree[rendezvousFreeCount++] = m;
        }
    }

    /** The DONE of a rendezvous went: the peer may send another. */
    void rendezvousDoneSent() {
        rendezvousUndone--;
    }

    private void repost(int slot, boolean credited) {
        slots.repost(slot, credited);
    }

    /** Aborting: messages read but not handed over go back, since nobody will release them. */
    void dropDeliveries() {
        while (deliveryCount > 0) {
            Message m = delivery[deliveryHead];
            delivery[deliveryHead] = null;
            deliveryHead = (deliveryHead + 1) % delivery.length;
            deliveryCount--;
            if (m.slot < 0 && m.buffer != null && m.ready) {
                recycleRendezvous(m);
            }
        }
    }

    /** Finished: the buffers of reads never posted go back to the pool. */
    void recycleReads() {
        while (readsWaitingCount > 0) {
            Message m = nextRead();
            if (m.buffer != null) {
                m.buffer.recycle();
                m.buffer = null;
            }
        }
    }

    /** Finished, the QP destroyed: slots not held by a message the user still has go back. */
    void recycleSlots() {
        slots.recycle();
    }
}
