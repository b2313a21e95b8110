package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.SendRequest;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A channel's send queue, on its loop thread: the sends waiting for credits or a token, the ring of what
 * was posted (sends and RDMA Reads, in order), the rendezvous {@link Tokens}, and the CREDIT and BYE
 * messages. It allocates nothing per message beyond the pool's buffers.
 */
final class SendSide {
    private static final int POST_BATCH = 16;
    /** Credits a data message needs: the last one stays for a REQUEST. */
    private static final int DATA_CREDITS = 2;

    private final MessageChannel channel;
    private final ChannelLoop loop;
    private final BufferPool pool;
    private final ChannelOptions options;
    private final AtomicInteger pending; // the channel's: user sends not yet posted
    private ReceiveSide receiver;
    private ConfinedPoster poster;
    private final int maxInline;

    private int credits; // receives the peer has free for us
    private int peerReceives;
    private boolean requestOutstanding; // we asked for credits and none came yet
    private boolean byeSent;
    private boolean shutWanted, shutSent;

    private MessageBuffer queueHead, queueTail, backlogHead, backlogTail; // ready to post; waiting for a token

    private final SendSlots slots;
    private final SendSlots.ReadDone onReadDone = this::readDone;
    private int sinceSignal;
    private final int signalEvery;
    private final SendRequest sendBatch;
    private final SendRequest readRequest;
    private int lastSendChain = 1;

    // Rendezvous, sending: buffers the peer reads, by token.
    private final Tokens tokens;

    // Rendezvous, receiving: the peer's buffers we read, in the send queue (ReceiveSide queues them).
    private int readsInFlight;
    private long posts; // post lists and reads, for keepalive: unchanged over an interval means idle
    private long postsAtTick;
    private boolean keepaliveDue;
    long keepalivesSent; // for tests
    private final int readDepth;

    SendSide(MessageChannel channel, ChannelLoop loop, QueuePair qp, BufferPool pool, ChannelOptions options,
             int sqDepth, int readDepth, AtomicInteger pending) {
        this.channel = channel;
        this.loop = loop;
        this.pool = pool;
        this.options = options;
        this.pending = pending;
        this.slots = new SendSlots(sqDepth);
        this.signalEvery = Math.max(1, sqDepth / 4);
        this.readDepth = Math.max(1, readDepth);
        this.tokens = new Tokens(options.window());
        this.sendBatch = qp.newSendRequest(POST_BATCH, 1);
        this.readRequest = qp.newSendRequest(1, 1);
        readRequest.opcode(0, Opcode.RDMA_READ).signaled(0, true);
        this.maxInline = qp.maxInlineData();
    }

    /** Set once, right after the receive side is made: each side needs the other. */
    void receiver(ReceiveSide receiver) {
        this.receiver = receiver;
    }

    /** Connected: the peer starts us with as many credits as it posted receives. */
    void activate(int peerReceives, ConfinedPoster poster) {
        this.peerReceives = peerReceives;
        this.credits = peerReceives;
        this.poster = poster;
    }

    /** Credits a header of the peer's returned. */
    void credit(int c) throws ProtocolException {
        if (credits + c > peerReceives) {
            throw new ProtocolException("credits " + c + " would give " + (credits + c)
                    + ", more than the " + peerReceives + " receives the peer posted");
        }
        credits += c;
    }

    /** The peer answered our REQUEST: the next may go. */
    void answered() throws ProtocolException {
        if (!requestOutstanding) {
            throw new ProtocolException("an ANSWER to no REQUEST");
        }
        requestOutstanding = false;
    }

    /** The peer read a rendezvous: its buffer goes back to the pool. */
    void rendezvousDone(int token) throws ProtocolException {
        tokens.done(token);
    }

    /** A user's send, arrived on the loop thread. */
    void enqueue(MessageBuffer b) {
        MessageChannel.State state = channel.state();
        if (state != MessageChannel.State.OPEN && state != MessageChannel.State.CLOSING || shutSent) {
            if (shutSent) { // a send that raced shutdownOutput from another thread: the peer must not see it
                org.slf4j.LoggerFactory.getLogger(MessageChannel.class)
                        .warn("{}: a send that came after shutdownOutput was dropped", channel.name());
            }
            pending.decrementAndGet();
            b.recycle();
            return;
        }
        if (backlogHead != null || (b.length > options.eagerLimit() && !tokens.available())) {
            if (backlogTail == null) {
                backlogHead = b;
            } else {
                backlogTail.queueNext = b;
            }
            backlogTail = b;
        } else {
            admit(b);
        }
        channel.markDirty();
    }

    /** Posts reads, what the backlog lets through and sends; a CREDIT when nothing else carries the credits. */
    void flush() throws RdmaException {
        postReads();
        while (backlogHead != null && (backlogHead.length <= options.eagerLimit() || tokens.available())) {
            MessageBuffer b = backlogHead;
            backlogHead = b.queueNext;
            if (backlogHead == null) {
                backlogTail = null;
            }
            admit(b);
        }
        postSends();
        if (shutWanted && !shutSent && allSent()) { // after every rendezvous is read: nothing is delivered after it
            shutSent = true;
            append(control(Wire.SHUT, 0, 0));
            postSends();
        }
        returnCredits();
    }

    /**
     * The credit rules (docs/guide/channels.md#credits): an ANSWER to the peer's REQUEST, free (the peer
     * keeps a slot for it); a CREDIT when half the receives were reposted and nothing carries them; a
     * REQUEST, with the last credit, when data waits for credits. Ahead of the queue: not ordered with data.
     */
    private void returnCredits() throws RdmaException {
        int flags;
        if (receiver.peerRequested()) {
            flags = Wire.FLAG_ANSWER;
            receiver.answered();
        } else if (queueHead == null && credits >= 2
                && (keepaliveDue || receiver.returnable() >= Math.max(1, receiver.receives() / 2))) {
            flags = 0;
            if (keepaliveDue && receiver.returnable() < Math.max(1, receiver.receives() / 2)) {
                keepalivesSent++;
            }
        } else if (queueHead != null && credits < DATA_CREDITS && !requestOutstanding && credits >= 1) {
            flags = Wire.FLAG_REQUEST;
            requestOutstanding = true;
        } else {
            return;
        }
        MessageBuffer c = control(Wire.CREDIT, 0, 0);
        Wire.flags(c.whole, flags);
        c.queueNext = queueHead;
        queueHead = c;
        if (queueTail == null) {
            queueTail = c;
        }
        postSends();
    }

    /** A message of the protocol's own, its header written but for the credits (and flags). */
    private MessageBuffer control(int type, int length, int token) throws RdmaException {
        MessageBuffer c = pool.allocate(Wire.DESCRIPTOR);
        Wire.header(c.whole, type, 0, length, token);
        c.wireType = type;
        c.length = 0;
        return c;
    }

    /** Nothing waits to be sent, and no rendezvous waits for the peer's read. */
    boolean allSent() {
        return queueHead == null && backlogHead == null && tokens.allBack();
    }

    /** Once everything sent before it is delivered, a SHUT: see {@link MessageChannel#shutdownOutput()}. */
    void shutOutput() {
        shutWanted = true;
    }

    boolean byeSent() {
        return byeSent;
    }

    /** Signaled: its completion says that everything before it arrived. */
    void sayBye() throws RdmaException {
        byeSent = true;
        append(control(Wire.BYE, 0, 0));
        postSends();
    }

    /** Posted sends and reads not completed yet. */
    long unfinished() {
        return slots.unfinished();
    }

    /** Into the post queue: eagerly, or as the messages of a rendezvous. */
    private void admit(MessageBuffer b) {
        if (b.length <= options.eagerLimit()) {
            Wire.header(b.whole, Wire.DATA, 0, b.length, 0);
            append(b);
            return;
        }
        try {
            int token = tokens.take(b);
            int region = tokens.region(b.chunk);
            if (region < 0) {
                region = tokens.advertise(b.chunk);
                MessageBuffer ad = control(Wire.ADVERTISE, 0, 0);
                ad.whole.set(Wire.U64, Wire.HEADER, b.region.address());
                ad.whole.set(Wire.U32, Wire.HEADER + 8, (int) b.region.length());
                ad.whole.set(Wire.U32, Wire.HEADER + 12, b.region.rkey());
                append(ad);
            }
            MessageBuffer rv = control(Wire.RNDV, b.length, token);
            rv.whole.set(Wire.U64, Wire.HEADER, b.payloadAddress());
            rv.whole.set(Wire.U32, Wire.HEADER + 8, b.region.rkey());
            rv.whole.set(Wire.U32, Wire.HEADER + 12, region);
            rv.user = true;
            append(rv);
        } catch (RdmaException | RuntimeException e) {
            channel.fail(e);
        }
    }

    private void append(MessageBuffer b) {
        b.queueNext = null;
        if (queueTail == null) {
            queueHead = b;
        } else {
            queueTail.queueNext = b;
        }
        queueTail = b;
    }

    private void postReads() throws RdmaException {
        while (receiver.readWaiting() && readsInFlight < readDepth && slots.hasRoom(0)) {
            Message m = receiver.nextRead();
            int i = slots.next(0);
            MessageBuffer b = m.buffer;
            readRequest.wrId(0, loop.wrId(channel, MessageChannel.KIND_SQ, i))
                    .sge(0, 0, b.region, b.offset + Wire.HEADER, m.length)
                    .remote(0, m.remoteAddress, m.remoteKey);
            poster.postSend(readRequest);
            slots.putRead(i, m);
            slots.posted(1);
            readsInFlight++;
            sinceSignal = 0; // a signaled completion covers the sends before it
        }
    }

    private void postSends() throws RdmaException {
        while (postBatch() == POST_BATCH) {
            // a full list: there may be more
        }
    }

    private int postBatch() throws RdmaException {
        int n = 0;
        while (queueHead != null && n < POST_BATCH && slots.hasRoom(n)) {
            MessageBuffer b = queueHead;
            boolean free = b.wireType == Wire.CREDIT && (Wire.flags(b.whole) & Wire.FLAG_ANSWER) != 0;
            if (!free && credits < (b.wireType == Wire.CREDIT || b.wireType == Wire.BYE || b.wireType == Wire.SHUT ? 1 : DATA_CREDITS)) {
                break;
            }
            queueHead = b.queueNext;
            if (queueHead == null) {
                queueTail = null;
            }
            b.queueNext = null;
            credits -= free ? 0 : 1;
            if (b.user) {
                pending.decrementAndGet();
            }
            Wire.credits(b.whole, receiver.takeReturnable(0xffff));
            int bytes = Wire.HEADER + switch (b.wireType) {
                case Wire.DATA -> b.length;
                case Wire.RNDV, Wire.ADVERTISE -> Wire.DESCRIPTOR;
                default -> 0;
            };
            int i = slots.next(n);
            // The last of what is queued is signaled too: a channel that goes quiet gets its buffers back now
            // rather than signalEvery sends later (docs/results/2026-12-07-channel-latency.md, section 4).
            boolean signal = ++sinceSignal >= signalEvery || b.wireType == Wire.BYE || queueHead == null;
            if (signal) {
                sinceSignal = 0;
            }
            boolean inline = bytes <= maxInline;
            // Inline off before the SGE: a longer SGE under a set inline flag is refused.
            sendBatch.wrId(n, loop.wrId(channel, MessageChannel.KIND_SQ, i)).inline(n, false)
                    .sge(n, 0, b.region, b.offset, bytes).signaled(n, signal);
            if (inline) {
                sendBatch.inline(n, true);
            }
            slots.putSend(i, b, inline);
            n++;
        }
        if (n == 0) {
            return 0;
        }
        if (n != lastSendChain) {
            sendBatch.chain(n);
            lastSendChain = n;
        }
        poster.postSend(sendBatch);
        slots.posted(n);
        posts++;
        keepaliveDue = false;
        return n;
    }

    /**
     * A keepalive interval passed: a channel that posted nothing in it sends a CREDIT at its next flush (with
     * a credit to spare and nothing queued), whose send fails, retries spent, if the peer or the link is gone.
     */
    void keepaliveTick() {
        if (posts == postsAtTick && channel.state() == MessageChannel.State.OPEN) {
            keepaliveDue = true;
            channel.markDirty();
            postsAtTick = posts + 1; // its own post is not traffic
        } else {
            postsAtTick = posts;
        }
    }

    /** A signaled send or a read completed ({@link SendSlots#complete}). */
    void onCompletion(int index) {
        if (slots.complete(index, onReadDone)) {
            channel.markDirty();
        }
    }

    /** A rendezvous read landed: DONE tells the peer to free its buffer, and delivery goes on in order. */
    private void readDone(Message r) {
        readsInFlight--;
        MessageChannel.State state = channel.state();
        if (state == MessageChannel.State.DRAINING || state == MessageChannel.State.CLOSED) {
            return;
        }
        r.ready = true;
        try {
            append(control(Wire.DONE, 0, r.token));
            receiver.rendezvousDoneSent();
        } catch (RdmaException | RuntimeException e) {
            channel.fail(e);
            return;
        }
        receiver.drainDelivery();
    }

    /** Aborting: what was never posted goes back to the pool. */
    void dropQueued() {
        recycle(queueHead);
        recycle(backlogHead);
        queueHead = queueTail = backlogHead = backlogTail = null;
    }

    private void recycle(MessageBuffer list) {
        for (MessageBuffer b = list, next; b != null; b = next) {
            next = b.queueNext;
            if (b.user) {
                pending.decrementAndGet();
            }
            b.recycle();
        }
    }

    /** Finished: buffers of sends, reads and rendezvous whose completions never came go back to the pool. */
    void recycleAll() {
        slots.recycleAll();
        tokens.recycleAll();
    }
}
