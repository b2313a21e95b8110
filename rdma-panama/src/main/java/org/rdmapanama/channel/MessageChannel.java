package org.rdmapanama.channel;

import org.rdmapanama.cm.ConnectionEnd;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;
import org.rdmapanama.verbs.WcStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reliable, ordered messages with their boundaries kept, over one RC queue
 * pair that rdma_cm set up. Small messages go eagerly into a receive slot
 * the peer posted; larger ones by rendezvous: the receiver reads them with
 * RDMA Read into a buffer of its pool. Credits in every header keep the
 * sender from ever sending to a receive that is not posted
 * (docs/guide/channels.md).
 * <p>
 * {@link #send}, {@link #allocate}, {@link #close} and the {@link Message}
 * and {@link MessageBuffer} calls may come from any thread; everything else
 * happens on the channel's loop thread, where its {@link MessageHandler} runs.
 */
public final class MessageChannel implements AutoCloseable {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(MessageChannel.class);
    }

    enum State { CONNECTING, OPEN, CLOSING, DRAINING, CLOSED }

    static final int KIND_RECV = 1;
    static final int KIND_SQ = 2;
    private static final int POST_BATCH = 16;
    private static final int MAX_PEER_REGIONS = 64;
    private static final long DRAIN_NANOS = 1_000_000_000L;
    private static final long GRACEFUL_NANOS = 10_000_000_000L;
    private static final long END_REPORT_NANOS = 500_000_000L;
    /** Credits a data message needs: 2 stay for a REQUEST, of which 1 for answering one. */
    private static final int DATA_CREDITS = 3;

    final ChannelLoop loop;
    final int id;
    final int generation;
    final RdmaConnection connection;
    private final QueuePair qp;
    private final MessageHandler handler;
    private final BufferPool pool;
    private final ChannelOptions options;
    private final String name;
    private Wire.Peer peer;
    private int maxInline;

    // Receive side: slots posted for the peer.
    private final int receives;
    private final MessageBuffer[] slots;
    private final Message[] slotMessages;
    private final ReceiveRequest recvBatch;
    private final int[] repost;
    private int repostCount;
    private int lastRecvChain = 1;
    private int returnable;
    private int recvOutstanding;
    private final int[] early; // (slot, bytes) pairs that came before activation
    private int earlyCount;

    // Send queue: posted sends and reads, in order; a completion covers all before it.
    private final int sqDepth;
    private final int sqMask;
    private final MessageBuffer[] sqBuffers;
    private final Message[] sqReads;
    private final boolean[] sqInline;
    private long sqPosted;
    private long sqDone;
    private int sinceSignal;
    private final int signalEvery;
    private final SendRequest sendBatch;
    private final SendRequest readRequest;
    private int lastSendChain = 1;
    private ConfinedPoster poster;
    private int credits;
    private MessageBuffer queueHead, queueTail;
    private MessageBuffer backlogHead, backlogTail;
    private final AtomicInteger pending = new AtomicInteger();
    private boolean writable = true;
    private boolean peerRequested; // the peer waits for credits: return them even below half a window
    private boolean requestOutstanding; // we asked for credits and none came yet
    private final SendRequest controlRequest;

    // Rendezvous, sending: buffers the peer reads, by token.
    private final MessageBuffer[] tokens;
    private final int[] freeTokens;
    private int freeTokenCount;
    private final BitSet advertised = new BitSet();

    // Rendezvous, receiving, and delivery in order.
    private final long[] peerRegionAddress = new long[MAX_PEER_REGIONS];
    private final long[] peerRegionLength = new long[MAX_PEER_REGIONS];
    private final int[] peerRegionRkey = new int[MAX_PEER_REGIONS];
    private int peerRegions;
    private final Message[] rendezvousFree;
    private int rendezvousFreeCount;
    private final Message[] delivery;
    private int deliveryHead, deliveryCount;
    private final Message[] readsWaiting;
    private int readsWaitingHead, readsWaitingCount;
    private int readsInFlight;
    private final int readDepth;

    // Lifecycle: loop thread, except state (read anywhere).
    private volatile State state = State.CONNECTING;
    private Throwable cause;
    private boolean peerSaidBye;
    private boolean awaitingEnd; // a flush came before rdma_cm said why the connection ended
    private long deadline;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    MessageChannel dirtyNext;
    boolean dirty;
    private volatile Object attachment;

    MessageChannel(ChannelLoop loop, int id, int generation, RdmaConnection connection, MessageHandler handler,
                   BufferPool pool, ChannelOptions options, int sqDepth, int readDepth, String name) throws RdmaException {
        this.loop = loop;
        this.id = id;
        this.generation = generation;
        this.connection = connection;
        this.qp = connection.queuePair();
        this.handler = handler;
        this.pool = pool;
        this.options = options;
        this.name = name;
        this.receives = options.window() + 1;
        this.sqDepth = sqDepth;
        int ring = Integer.highestOneBit(Math.max(2, sqDepth) - 1) << 1;
        this.sqMask = ring - 1;
        this.sqBuffers = new MessageBuffer[ring];
        this.sqReads = new Message[ring];
        this.sqInline = new boolean[ring];
        this.signalEvery = Math.max(1, sqDepth / 4);
        this.readDepth = Math.max(1, readDepth);
        this.slots = new MessageBuffer[receives];
        this.slotMessages = new Message[receives];
        this.repost = new int[receives];
        this.early = new int[2 * receives];
        this.tokens = new MessageBuffer[options.window()];
        this.freeTokens = new int[options.window()];
        for (int t = 0; t < tokens.length; t++) {
            freeTokens[freeTokenCount++] = tokens.length - 1 - t;
        }
        this.rendezvousFree = new Message[options.window()];
        for (int i = 0; i < rendezvousFree.length; i++) {
            rendezvousFree[rendezvousFreeCount++] = new Message(this, -1, null);
        }
        this.delivery = new Message[receives + options.window()];
        this.readsWaiting = new Message[options.window()];
        this.recvBatch = qp.newReceiveRequest(receives, 1);
        this.sendBatch = qp.newSendRequest(POST_BATCH, 1);
        this.readRequest = qp.newSendRequest(1, 1);
        readRequest.opcode(0, Opcode.RDMA_READ).signaled(0, true);
        this.controlRequest = qp.newSendRequest(1, 1);
        this.maxInline = qp.maxInlineData();
        boolean ok = false;
        try {
            for (int i = 0; i < receives; i++) {
                MessageBuffer b = pool.allocate(options.eagerLimit());
                slots[i] = b;
                slotMessages[i] = new Message(this, i, b.payloadView());
                recvBatch.wrId(i, loop.wrId(this, KIND_RECV, i)).sge(i, 0, b.region, b.offset, options.slotSize());
            }
            recvBatch.chain(receives);
            lastRecvChain = receives;
            recvOutstanding = receives;
            ok = true;
        } finally {
            if (!ok) {
                recycleSlots();
            }
        }
    }

    /** Completions a channel may have outstanding: its receives and its send queue. */
    int cqEntries() {
        return cqEntries(options, sqDepth);
    }

    static int cqEntries(ChannelOptions options, int sqDepth) {
        return options.window() + 1 + sqDepth;
    }

    /** Every receive slot, posted once the loop can find the channel: the peer may send as soon as it is connected. */
    void postInitialReceives() throws RdmaException {
        qp.postRecv(recvBatch);
    }

    // ---- public API ----

    /** A registered buffer of the group's pool with room for {@code bytes}; fill it, then {@link #send} it. */
    public MessageBuffer allocate(int bytes) throws RdmaException {
        if (peer != null && bytes > peer.maxMessageSize()) {
            throw new IllegalArgumentException("a message of " + bytes + " bytes is larger than the peer takes ("
                    + peer.maxMessageSize() + ")");
        }
        return pool.allocate(bytes);
    }

    /**
     * Sends the first {@code length} bytes of {@code buffer}'s segment, without
     * copying them; the buffer is the channel's from here on. Queued while the
     * peer has no receive free; refused when {@link ChannelOptions#sendQueueLimit()}
     * sends wait already ({@link #isWritable()} says when to stop).
     *
     * @throws ClosedResourceException if the channel is closing or closed
     * @throws IllegalStateException   if the queue is full, or the buffer was already sent or released
     */
    public void send(MessageBuffer buffer, int length) {
        if (buffer.sizeClass.pool() != pool) {
            throw new IllegalArgumentException("this buffer belongs to another channel group's pool");
        }
        if (length < 0 || length > buffer.capacity()) {
            throw new IllegalArgumentException("length " + length + " outside the buffer's 0.." + buffer.capacity());
        }
        State s = state;
        if (s != State.OPEN) {
            throw new ClosedResourceException(name + " is " + s.name().toLowerCase(java.util.Locale.ROOT)
                    + (cause != null ? ": " + cause.getMessage() : ""));
        }
        if (length > peer.maxMessageSize()) {
            throw new IllegalArgumentException("a message of " + length + " bytes is larger than the peer takes ("
                    + peer.maxMessageSize() + ")");
        }
        if (pending.incrementAndGet() > options.sendQueueLimit()) {
            pending.decrementAndGet();
            throw new IllegalStateException(name + ": " + options.sendQueueLimit()
                    + " sends are queued already; wait until it is writable (MessageHandler.onWritabilityChanged)");
        }
        if (!buffer.transition(MessageBuffer.OWNED, MessageBuffer.SENDING)) {
            pending.decrementAndGet();
            throw new IllegalStateException("cannot send this buffer: it was already sent or released");
        }
        buffer.channel = this;
        buffer.length = length;
        buffer.wireType = Wire.DATA;
        buffer.user = true;
        if (loop.inLoop()) {
            enqueue(buffer);
        } else {
            loop.handoff(buffer);
        }
    }

    /** Runs {@code task} on the channel's loop thread, where its handler runs (at once when called there). */
    public void execute(Runnable task) {
        loop.execute(task);
    }

    /** Whether sends are not piling up: below half of {@link ChannelOptions#sendQueueLimit()} wait to go. */
    public boolean isWritable() {
        return pending.get() < Math.max(1, options.sendQueueLimit() / 2);
    }

    public boolean isOpen() {
        return state == State.OPEN;
    }

    /** Completes when the channel is closed: normally after a graceful close by either side, else with the cause. */
    public CompletableFuture<Void> closeFuture() {
        return closed.copy();
    }

    /** The rdma_cm connection underneath (its device, QP number; not for posting). */
    public RdmaConnection connection() {
        return connection;
    }

    public void attach(Object value) {
        attachment = value;
    }

    public Object attachment() {
        return attachment;
    }

    /**
     * Graceful close: what was sent is delivered (rendezvous reads included),
     * then the channel disconnects; {@link #closeFuture()} tells when. A peer
     * that does not let it finish within 10 s gets it closed abortively.
     */
    @Override
    public void close() {
        loop.execute(this::closeGracefully);
    }

    /** Abortive close: pending sends are dropped, and {@code cause} is what the handler and {@link #closeFuture()} see. */
    public void abort(Throwable cause) {
        loop.execute(() -> fail(cause));
    }

    @Override
    public String toString() {
        return name + " (" + state + ")";
    }

    // ---- set-up (loop thread) ----

    /** Connected: the peer's promises are known. */
    void activate(Wire.Peer peer) {
        if (state != State.CONNECTING) {
            return;
        }
        this.peer = peer;
        this.credits = peer.receives();
        this.poster = qp.confinedPoster();
        state = State.OPEN;
        try {
            handler.onOpen(this);
        } catch (Throwable t) {
            fail(t);
            return;
        }
        for (int i = 0; i < earlyCount && state == State.OPEN; i++) {
            onReceive(early[2 * i], early[2 * i + 1]);
        }
        earlyCount = 0;
        markDirty();
    }

    // ---- completions (loop thread) ----

    void onCompletion(int kind, int index, boolean success, WcStatus status, int bytes, int vendorError) {
        if (kind == KIND_RECV) {
            recvOutstanding--;
            if (success) {
                if (state == State.CONNECTING) {
                    early[2 * earlyCount] = index;
                    early[2 * earlyCount++ + 1] = bytes;
                } else {
                    onReceive(index, bytes);
                }
            } else {
                failedCompletion("a receive", status, vendorError);
            }
        } else {
            onSqCompletion(index);
            if (!success) {
                failedCompletion("a send or read", status, vendorError);
            }
        }
        if (state == State.DRAINING && recvOutstanding == 0 && sqDone == sqPosted) {
            finish();
        }
    }

    private void failedCompletion(String what, WcStatus status, int vendorError) {
        if (state == State.DRAINING || state == State.CLOSED) {
            return; // flushed: expected
        }
        if (status == WcStatus.WR_FLUSH_ERR) {
            // The QP went to ERR because the connection ended: say how it ended, not that something flushed.
            ConnectionEnd end = connection.ended().getNow(null);
            if (peerSaidBye || end != null) {
                onEnded(end != null ? end : new ConnectionEnd(ConnectionEnd.Reason.DISCONNECTED, "after BYE"));
                return;
            }
            // siw's QP fails with its TCP stream, before rdma_cm reports why: wait a little for the report.
            if (!awaitingEnd) {
                awaitingEnd = true;
                deadline = System.nanoTime() + END_REPORT_NANOS;
                loop.watchDeadline(this);
            }
            return;
        }
        String detail = status == WcStatus.WR_FLUSH_ERR
                ? what + " was flushed: the queue pair went to the error state"
                : what + " failed with " + status + " (vendor error 0x" + Integer.toHexString(vendorError) + ")";
        fail(new RdmaException(name + ": " + detail));
    }

    private void onReceive(int slot, int bytes) {
        if (state == State.DRAINING || state == State.CLOSED) {
            return; // not reposted: the slots are recycled when the channel finishes
        }
        MemorySegment s = slots[slot].whole;
        int type;
        try {
            type = Wire.check(s, bytes, options.slotSize());
            int c = Wire.credits(s);
            if (c != 0) {
                if (credits + c > peer.receives()) {
                    throw new ProtocolException("credits " + c + " would give " + (credits + c)
                            + ", more than the " + peer.receives() + " receives the peer posted");
                }
                credits += c;
                requestOutstanding = false;
                markDirty();
            }
            if ((Wire.flags(s) & Wire.FLAG_REQUEST) != 0) {
                peerRequested = true;
                markDirty();
            }
            switch (type) {
                case Wire.DATA -> {
                    Message m = slotMessages[slot];
                    m.length = bytes - Wire.HEADER;
                    m.ready = true;
                    deliver(m);
                }
                case Wire.CREDIT -> repost(slot);
                case Wire.RNDV -> {
                    receiveRendezvous(s);
                    repost(slot);
                }
                case Wire.DONE -> {
                    int token = Wire.token(s);
                    if (token < 0 || token >= tokens.length || tokens[token] == null) {
                        throw new ProtocolException("DONE for token " + Integer.toUnsignedString(token)
                                + ", which is not an outstanding rendezvous");
                    }
                    tokens[token].recycle();
                    tokens[token] = null;
                    freeTokens[freeTokenCount++] = token;
                    repost(slot);
                }
                case Wire.ADVERTISE -> {
                    receiveAdvertise(s);
                    repost(slot);
                }
                case Wire.BYE -> peerSaidBye = true; // the disconnect follows; nothing more arrives
                default -> throw new ProtocolException("unknown message type " + type);
            }
        } catch (ProtocolException e) {
            fail(new ProtocolException(name + ": " + e.getMessage()));
        } catch (RdmaException | RuntimeException e) {
            fail(e);
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
        peerRegionAddress[peerRegions] = address;
        peerRegionLength[peerRegions] = length;
        peerRegionRkey[peerRegions++] = rkey;
    }

    private void receiveRendezvous(MemorySegment s) throws RdmaException {
        long address = s.get(Wire.U64, Wire.HEADER);
        int rkey = s.get(Wire.U32, Wire.HEADER + 8);
        int zero = s.get(Wire.U32, Wire.HEADER + 12);
        int length = Wire.length(s);
        int token = Wire.token(s);
        if (zero != 0) {
            throw new ProtocolException("RNDV reserved field is " + Integer.toUnsignedString(zero) + ", not 0");
        }
        if (length <= options.eagerLimit() || length > options.maxMessageSize()) {
            throw new ProtocolException("RNDV length " + Integer.toUnsignedString(length) + " is not in "
                    + (options.eagerLimit() + 1) + ".." + options.maxMessageSize());
        }
        boolean inside = false;
        for (int r = 0; r < peerRegions && !inside; r++) {
            long offset = address - peerRegionAddress[r];
            inside = peerRegionRkey[r] == rkey && Long.compareUnsigned(offset, peerRegionLength[r]) < 0
                    && Long.compareUnsigned(offset + length, peerRegionLength[r]) <= 0;
        }
        if (!inside) {
            throw new ProtocolException("RNDV of " + length + " bytes at 0x" + Long.toHexString(address) + " rkey 0x"
                    + Integer.toHexString(rkey) + " lies in no region the peer advertised");
        }
        if (rendezvousFreeCount == 0) {
            throw new ProtocolException("RNDV beyond the " + rendezvousFree.length + " outstanding a peer may have");
        }
        Message m = rendezvousFree[--rendezvousFreeCount];
        m.buffer = pool.allocate(length);
        m.length = length;
        m.token = token;
        m.ready = false;
        m.remoteAddress = address;
        m.remoteKey = rkey;
        delivery[(deliveryHead + deliveryCount++) % delivery.length] = m;
        readsWaiting[(readsWaitingHead + readsWaitingCount++) % readsWaiting.length] = m;
        markDirty();
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
            handler.onMessage(this, m);
        } catch (Throwable t) {
            fail(t);
        }
    }

    private void drainDelivery() {
        while (deliveryCount > 0 && delivery[deliveryHead].ready && state != State.DRAINING && state != State.CLOSED) {
            Message m = delivery[deliveryHead];
            delivery[deliveryHead] = null;
            deliveryHead = (deliveryHead + 1) % delivery.length;
            deliveryCount--;
            handOver(m);
        }
    }

    private void onSqCompletion(int index) {
        long done = sqDone + ((index - (int) sqDone) & sqMask);
        if (done >= sqPosted) {
            return; // stale: never posted
        }
        for (long p = sqDone; p <= done; p++) {
            int i = (int) (p & sqMask);
            MessageBuffer b = sqBuffers[i];
            if (b != null) {
                sqBuffers[i] = null;
                b.recycle();
            }
            Message r = sqReads[i];
            if (r != null) {
                sqReads[i] = null;
                readsInFlight--;
                readDone(r);
            }
        }
        sqDone = done + 1;
        markDirty();
    }

    private void readDone(Message r) {
        if (state == State.DRAINING || state == State.CLOSED) {
            return;
        }
        r.ready = true;
        try {
            MessageBuffer done = pool.allocate(0);
            Wire.header(done.whole, Wire.DONE, 0, 0, r.token);
            done.wireType = Wire.DONE;
            done.length = 0;
            append(done);
        } catch (RdmaException | RuntimeException e) {
            fail(e);
            return;
        }
        drainDelivery();
    }

    // ---- releases (loop thread) ----

    void release(Message m) {
        if (loop.inLoop()) {
            released(m);
        } else {
            loop.handoff(m);
        }
    }

    void released(Message m) {
        if (m.slot >= 0) {
            if (state == State.CLOSED) {
                slots[m.slot].recycle(); // the channel finished while the message was held
                slots[m.slot] = null;
            } else if (state != State.DRAINING) {
                repost(m.slot);
            }
            return;
        }
        if (m.buffer != null) {
            m.buffer.recycle();
            m.buffer = null;
        }
        rendezvousFree[rendezvousFreeCount++] = m;
    }

    private void repost(int slot) {
        repost[repostCount++] = slot;
        returnable++;
        markDirty();
    }

    // ---- sending (loop thread) ----

    /** A user's send, arrived on the loop thread. */
    void enqueue(MessageBuffer b) {
        if (state != State.OPEN && state != State.CLOSING) {
            pending.decrementAndGet();
            b.recycle();
            return;
        }
        if (backlogHead != null || (b.length > options.eagerLimit() && freeTokenCount == 0)) {
            if (backlogTail == null) {
                backlogHead = b;
            } else {
                backlogTail.queueNext = b;
            }
            backlogTail = b;
        } else {
            admit(b);
        }
        markDirty();
    }

    /** Into the post queue: eagerly, or as the messages of a rendezvous. */
    private void admit(MessageBuffer b) {
        if (b.length <= options.eagerLimit()) {
            Wire.header(b.whole, Wire.DATA, 0, b.length, 0);
            append(b);
            return;
        }
        try {
            int token = freeTokens[--freeTokenCount];
            tokens[token] = b;
            if (!advertised.get(b.chunk)) {
                advertised.set(b.chunk);
                MessageBuffer ad = pool.allocate(Wire.DESCRIPTOR);
                Wire.header(ad.whole, Wire.ADVERTISE, 0, 0, 0);
                ad.whole.set(Wire.U64, Wire.HEADER, b.region.address());
                ad.whole.set(Wire.U32, Wire.HEADER + 8, (int) b.region.length());
                ad.whole.set(Wire.U32, Wire.HEADER + 12, b.region.rkey());
                ad.wireType = Wire.ADVERTISE;
                append(ad);
            }
            MessageBuffer rv = pool.allocate(Wire.DESCRIPTOR);
            Wire.header(rv.whole, Wire.RNDV, 0, b.length, token);
            rv.whole.set(Wire.U64, Wire.HEADER, b.payloadAddress());
            rv.whole.set(Wire.U32, Wire.HEADER + 8, b.region.rkey());
            rv.whole.set(Wire.U32, Wire.HEADER + 12, 0);
            rv.wireType = Wire.RNDV;
            rv.user = true;
            append(rv);
        } catch (RdmaException | RuntimeException e) {
            fail(e);
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

    void markDirty() {
        if (!dirty) {
            dirty = true;
            loop.dirty(this);
        }
    }

    /** Posts what accumulated: receives, reads, sends and, when nothing carries them, credits. */
    void flush() {
        dirty = false;
        try {
            if (repostCount > 0 && state != State.DRAINING && state != State.CLOSED) {
                postReceives();
            }
            if (state != State.OPEN && state != State.CLOSING) {
                return;
            }
            postReads();
            while (backlogHead != null && (backlogHead.length <= options.eagerLimit() || freeTokenCount > 0)) {
                MessageBuffer b = backlogHead;
                backlogHead = b.queueNext;
                if (backlogHead == null) {
                    backlogTail = null;
                }
                admit(b);
            }
            postSends();
            returnCredits();
            boolean now = isWritable();
            if (now != writable) {
                writable = now;
                handler.onWritabilityChanged(this);
            }
            if (state == State.CLOSING) {
                continueClosing();
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    /**
     * The credit rules (docs/guide/channels.md#credits): data needs 3 credits, so
     * that 2 are always left for a REQUEST and 1 for the answer to one; a
     * CREDIT goes when half the receives were reposted and nothing carries them,
     * or when the peer asked and there are 2 or more to give.
     */
    private void returnCredits() throws RdmaException {
        if (peerRequested && returnable >= 2 && credits >= 1) {
            postControl(0);
        } else if (queueHead == null && returnable >= Math.max(1, receives / 2) && credits >= 2) {
            postControl(0);
        } else if (queueHead != null && credits < DATA_CREDITS && !requestOutstanding && credits >= 2) {
            requestOutstanding = true;
            postControl(Wire.FLAG_REQUEST);
        }
    }

    /** A CREDIT, posted at once: it is not ordered with data, so it never waits behind it. */
    private void postControl(int flags) throws RdmaException {
        if (sqPosted - sqDone >= sqDepth) {
            return; // the next send completion marks the channel dirty, and this runs again
        }
        MessageBuffer c = pool.allocate(0);
        Wire.header(c.whole, Wire.CREDIT, 0, 0, 0);
        Wire.flags(c.whole, flags);
        credits--;
        Wire.credits(c.whole, takeReturnable());
        int i = (int) (sqPosted & sqMask);
        boolean signal = ++sinceSignal >= signalEvery;
        if (signal) {
            sinceSignal = 0;
        }
        controlRequest.wrId(0, loop.wrId(this, KIND_SQ, i)).inline(0, false).sge(0, 0, c.region, c.offset, Wire.HEADER)
                .signaled(0, signal);
        boolean inline = Wire.HEADER <= maxInline;
        if (inline) {
            controlRequest.inline(0, true);
        }
        poster.postSend(controlRequest);
        sqInline[i] = inline;
        sqPosted++;
        if (inline) {
            c.recycle();
        } else {
            sqBuffers[i] = c;
        }
    }

    /** Everything reposted since the last message, told now: no request is left unanswered. */
    private int takeReturnable() {
        int give = Math.min(returnable, 0xffff);
        returnable -= give;
        if (returnable == 0) {
            peerRequested = false;
        }
        return give;
    }

    private void postReceives() throws RdmaException {
        int n = repostCount;
        for (int k = 0; k < n; k++) {
            int slot = repost[k];
            MessageBuffer b = slots[slot];
            recvBatch.wrId(k, loop.wrId(this, KIND_RECV, slot)).sge(k, 0, b.region, b.offset, options.slotSize());
        }
        if (n != lastRecvChain) {
            recvBatch.chain(n);
            lastRecvChain = n;
        }
        poster.postRecv(recvBatch);
        repostCount = 0;
        recvOutstanding += n;
    }

    private void postReads() throws RdmaException {
        while (readsWaitingCount > 0 && readsInFlight < readDepth && sqPosted - sqDone < sqDepth) {
            Message m = readsWaiting[readsWaitingHead];
            readsWaiting[readsWaitingHead] = null;
            readsWaitingHead = (readsWaitingHead + 1) % readsWaiting.length;
            readsWaitingCount--;
            int i = (int) (sqPosted & sqMask);
            MessageBuffer b = m.buffer;
            readRequest.wrId(0, loop.wrId(this, KIND_SQ, i))
                    .sge(0, 0, b.region, b.offset + Wire.HEADER, m.length)
                    .remote(0, m.remoteAddress, m.remoteKey);
            poster.postSend(readRequest);
            sqReads[i] = m;
            sqPosted++;
            readsInFlight++;
            sinceSignal = 0; // a signaled completion covers the sends before it
        }
    }

    private void postSends() throws RdmaException {
        int n = 0;
        while (queueHead != null && n < POST_BATCH && sqPosted + n - sqDone < sqDepth) {
            MessageBuffer b = queueHead;
            if (credits < (b.wireType == Wire.BYE ? 1 : DATA_CREDITS)) {
                break;
            }
            queueHead = b.queueNext;
            if (queueHead == null) {
                queueTail = null;
            }
            b.queueNext = null;
            credits--;
            if (b.user) {
                pending.decrementAndGet();
            }
            Wire.credits(b.whole, takeReturnable());
            int bytes = Wire.HEADER + switch (b.wireType) {
                case Wire.DATA -> b.length;
                case Wire.RNDV, Wire.ADVERTISE -> Wire.DESCRIPTOR;
                default -> 0;
            };
            int i = (int) ((sqPosted + n) & sqMask);
            boolean signal = ++sinceSignal >= signalEvery || b.wireType == Wire.BYE;
            if (signal) {
                sinceSignal = 0;
            }
            boolean inline = bytes <= maxInline;
            // Inline off before the SGE: a longer SGE under a set inline flag is refused.
            sendBatch.wrId(n, loop.wrId(this, KIND_SQ, i)).inline(n, false).sge(n, 0, b.region, b.offset, bytes)
                    .signaled(n, signal);
            if (inline) {
                sendBatch.inline(n, true);
            }
            sqBuffers[i] = b;
            sqInline[i] = inline;
            n++;
        }
        if (n == 0) {
            return;
        }
        if (n != lastSendChain) {
            sendBatch.chain(n);
            lastSendChain = n;
        }
        poster.postSend(sendBatch);
        long first = sqPosted;
        sqPosted += n;
        for (long p = first; p < sqPosted; p++) { // inline data was copied when posted
            int i = (int) (p & sqMask);
            if (sqInline[i]) {
                sqBuffers[i].recycle();
                sqBuffers[i] = null;
            }
        }
    }

    // ---- closing (loop thread) ----

    private void closeGracefully() {
        if (state == State.OPEN) {
            state = State.CLOSING;
            deadline = System.nanoTime() + GRACEFUL_NANOS;
            loop.watchDeadline(this);
            markDirty();
        } else if (state == State.CONNECTING) {
            fail(new ClosedResourceException(name + " was closed before it was connected"));
        }
    }

    /** Once all that was sent is delivered and read, says BYE; once that completes, disconnects. */
    private void continueClosing() throws RdmaException {
        if (queueHead != null || backlogHead != null || freeTokenCount < tokens.length) {
            return;
        }
        if (!byeSent) { // signaled: its completion says that everything before it arrived
            MessageBuffer bye = pool.allocate(0);
            Wire.header(bye.whole, Wire.BYE, 0, 0, 0);
            bye.wireType = Wire.BYE;
            byeSent = true;
            append(bye);
            postSends();
            return;
        }
        if (sqDone < sqPosted) {
            return;
        }
        connection.disconnect();
        startDrain();
    }

    private boolean byeSent;

    /** The connection ended underneath (the cm thread's report, run on the loop). */
    void onEnded(ConnectionEnd end) {
        if (state == State.CLOSED || state == State.DRAINING) {
            return;
        }
        if (end.reason() == ConnectionEnd.Reason.DISCONNECTED && (peerSaidBye || byeSent)) {
            startDrain(); // a graceful close by one side
            return;
        }
        fail(new RdmaException(name + ": " + switch (end.reason()) {
            case DISCONNECTED -> "the peer disconnected without closing its channel (" + end.detail() + ")";
            case DEVICE_REMOVED -> "the device was removed (" + end.detail() + ")";
            case FAILED -> end.detail();
            case CLOSED -> "the connection was closed";
        }));
    }

    /** Closes abortively with {@code t} as the cause; the first cause wins. */
    void fail(Throwable t) {
        if (state == State.DRAINING || state == State.CLOSED) {
            return;
        }
        cause = t;
        Log.LOG.info("{} fails: {}", name, t.toString());
        startDrain();
    }

    private void startDrain() {
        State was = state;
        state = State.DRAINING;
        deadline = System.nanoTime() + DRAIN_NANOS;
        loop.watchDeadline(this);
        dropQueued();
        if (was == State.CONNECTING && poster == null) {
            // never activated: nothing was posted but receives, and the connection closes them
            finish();
            return;
        }
        try {
            qp.toError(); // flushes what is outstanding
        } catch (RdmaException | RuntimeException e) {
            Log.LOG.debug("moving {} to ERR: {}", name, e.getMessage());
        }
        if (recvOutstanding == 0 && sqDone == sqPosted) {
            finish();
        }
    }

    private void dropQueued() {
        for (MessageBuffer b = queueHead; b != null; ) {
            MessageBuffer next = b.queueNext;
            if (b.user) {
                pending.decrementAndGet();
            }
            b.recycle();
            b = next;
        }
        queueHead = queueTail = null;
        for (MessageBuffer b = backlogHead; b != null; ) {
            MessageBuffer next = b.queueNext;
            pending.decrementAndGet();
            b.recycle();
            b = next;
        }
        backlogHead = backlogTail = null;
        while (deliveryCount > 0) {
            Message m = delivery[deliveryHead];
            delivery[deliveryHead] = null;
            deliveryHead = (deliveryHead + 1) % delivery.length;
            deliveryCount--;
            if (m.slot < 0 && m.buffer != null && m.ready) {
                // read but not handed over: nobody will release it
                m.buffer.recycle();
                m.buffer = null;
                rendezvousFree[rendezvousFreeCount++] = m;
            }
        }
    }

    /** Called by the loop when the drain deadline passes: some completions never came. */
    void deadlinePassed(long now) {
        if (awaitingEnd && (state == State.OPEN || state == State.CLOSING)) {
            fail(new RdmaException(name + ": its queue pair went to the error state (completions flushed), and"
                    + " rdma_cm reported no end within " + END_REPORT_NANOS / 1_000_000 + " ms"));
        } else if (state == State.CLOSING && now - deadline >= 0) {
            fail(new RdmaException(name + ": the graceful close did not finish within "
                    + GRACEFUL_NANOS / 1_000_000_000L + " s"));
        } else if (state == State.DRAINING && now - deadline >= 0) {
            Log.LOG.debug("{}: {} receives and {} sends never completed after the flush; closing anyway",
                    name, recvOutstanding, sqPosted - sqDone);
            finish();
        }
    }

    long deadline() {
        return deadline;
    }

    boolean watching() {
        return awaitingEnd || state == State.CLOSING || state == State.DRAINING;
    }

    private void finish() {
        state = State.CLOSED;
        if (poster != null) {
            poster.close();
        }
        for (int i = 0; i < sqBuffers.length; i++) {
            if (sqBuffers[i] != null) {
                sqBuffers[i].recycle();
                sqBuffers[i] = null;
            }
            Message r = sqReads[i];
            if (r != null && r.buffer != null) {
                r.buffer.recycle();
                r.buffer = null;
                sqReads[i] = null;
            }
        }
        for (int t = 0; t < tokens.length; t++) {
            if (tokens[t] != null) {
                tokens[t].recycle();
                tokens[t] = null;
            }
        }
        while (readsWaitingCount > 0) {
            Message m = readsWaiting[readsWaitingHead];
            readsWaiting[readsWaitingHead] = null;
            readsWaitingHead = (readsWaitingHead + 1) % readsWaiting.length;
            readsWaitingCount--;
            if (m.buffer != null) {
                m.buffer.recycle();
                m.buffer = null;
            }
        }
        try {
            connection.close();
        } catch (RdmaException | RuntimeException e) {
            Log.LOG.warn("closing the connection of {}: {}", name, e.toString());
            if (cause == null) {
                cause = e;
            }
        }
        recycleSlots();
        loop.unregister(this);
        if (cause == null) {
            closed.complete(null);
        } else {
            closed.completeExceptionally(cause);
        }
        try {
            handler.onClose(this, cause);
        } catch (RuntimeException e) {
            Log.LOG.warn("the close handler of {} failed", name, e);
        }
    }

    /** Slots not held by a message the user still has go back to the pool. */
    private void recycleSlots() {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null && (slotMessages[i] == null || !slotMessages[i].isHeld())) {
                slots[i].recycle();
                slots[i] = null;
            }
        }
    }

    State state() {
        return state;
    }
}
