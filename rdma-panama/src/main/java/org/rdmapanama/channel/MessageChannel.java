package org.rdmapanama.channel;

import org.rdmapanama.cm.ConnectionEnd;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.WcStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reliable, ordered messages with their boundaries kept, over one RC queue pair that rdma_cm set up. Small
 * messages go eagerly into a receive slot the peer posted; larger ones by rendezvous: the receiver reads them
 * with RDMA Read into a buffer of its pool. Credits in every header keep the sender from ever sending to a
 * receive that is not posted (docs/guide/channels.md).
 * <p>
 * {@link #send}, {@link #allocate}, {@link #close} and the {@link Message} and {@link MessageBuffer} calls may
 * come from any thread; everything else happens on the channel's loop thread, where its {@link MessageHandler}
 * runs.
 */
public final class MessageChannel implements AutoCloseable {
    // Here: the public API and the lifecycle (activation, the abortive close, the drain, the finish), and the
    // loop's events handed to ReceiveSide and SendSide, which hold the data path. Closing holds the graceful
    // close, the connection's end and the deadlines.
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(MessageChannel.class);
    }

    enum State { CONNECTING, OPEN, CLOSING, DRAINING, CLOSED }

    static final int KIND_RECV = 1;
    static final int KIND_SQ = 2;
    static final int KIND_SRQ = 3;

    final ChannelLoop loop;
    final int id;
    final int generation;
    final RdmaConnection connection;
    private final QueuePair qp;
    private final MessageHandler handler;
    private final BufferPool pool;
    private final ChannelOptions options;
    private final String name;
    private final int sqDepth;
    final SendSide sender;
    private final ReceiveSide receiver;
    private final Closing closing;
    private Wire.Peer peer;
    private ConfinedPoster poster;
    private final AtomicInteger pending = new AtomicInteger(); // user sends not posted yet
    private volatile boolean writable = true;
    private volatile boolean outputShut;

    // Lifecycle: loop thread, except state (read anywhere).
    private volatile State state = State.CONNECTING;
    private Throwable cause;
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
        this.sqDepth = sqDepth;
        this.sender = new SendSide(this, loop, qp, pool, options, sqDepth, readDepth, pending);
        this.receiver = new ReceiveSide(this, loop, qp, handler, pool, options, sender);
        sender.receiver(receiver);
        this.closing = new Closing(this, loop, connection, sender, receiver, name);
    }

    /** Completions a channel may have outstanding: its receives and its send queue. */
    int cqEntries() {
        return cqEntries(options, sqDepth);
    }

    static int cqEntries(ChannelOptions options, int sqDepth) {
        return options.window() + 2 + sqDepth;
    }

    /** Every receive slot, posted once the loop can find the channel: the peer may send as soon as it is connected. */
    void postInitialReceives() throws RdmaException {
        receiver.postInitial();
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
     * Sends the first {@code length} bytes of {@code buffer}'s segment, without copying them; the buffer is the
     * channel's from here on. Queued while the peer has no receive free; refused when
     * {@link ChannelOptions#sendQueueLimit()} sends wait already ({@link #isWritable()} says when to stop).
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
        if (outputShut) {
            throw new ClosedResourceException(name + ": its output is shut down");
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
        boolean w = pending.get() < Math.max(1, options.sendQueueLimit() / 2);
        if (!w) {
            // A sender that saw false waits for onWritabilityChanged. The loop can post the whole queue before its
            // next flush looks, so unless the false is remembered here that flush sees no change and never reports one.
            writable = false;
        }
        return w;
    }

    /** Half-close: what was sent is delivered, then the peer hears {@link MessageHandler#onInputShutdown}. */
    public void shutdownOutput() {
        outputShut = true;
        loop.execute(() -> {
            sender.shutOutput();
            markDirty();
        });
    }

    public boolean isOutputShutdown() {
        return outputShut;
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
     * Graceful close: what was sent is delivered (rendezvous reads included), then the channel disconnects;
     * {@link #closeFuture()} tells when. A peer that does not let it finish within 10 s gets it closed abortively.
     */
    @Override
    public void close() {
        loop.execute(closing::closeGracefully);
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
        this.poster = qp.confinedPoster();
        sender.activate(peer.receives(), poster);
        receiver.activate(poster);
        state = State.OPEN;
        try {
            handler.onOpen(this);
        } catch (Throwable t) {
            fail(t);
            return;
        }
        receiver.replayEarly();
        markDirty();
    }

    // ---- the loop's events (loop thread) ----

    void onCompletion(int kind, int index, boolean success, WcStatus status, int bytes, int vendorError) {
        if (kind == KIND_RECV) {
            receiver.onCompletion(index, success, bytes);
            if (!success) {
                closing.completionFailed("a receive", status, vendorError);
            }
        } else {
            sender.onCompletion(index);
            if (!success) {
                closing.completionFailed("a send or read", status, vendorError);
            }
        }
        if (state == State.DRAINING && receiver.outstanding() == 0) {
            closing.finish();
        }
    }

    /** From any thread: the message's memory goes back on the loop thread. */
    void release(Message m) {
        if (loop.inLoop()) {
            released(m);
        } else {
            loop.handoff(m);
        }
    }

    /** The peer's SHUT arrived, after everything it sent. */
    void inputShutdown() {
        try {
            handler.onInputShutdown(this);
        } catch (Throwable t) {
            fail(t);
        }
    }

    /** The peer's BYE arrived: a disconnect reported before it can be judged now. */
    void byeReceived() {
        closing.byeReceived();
    }

    void released(Message m) {
        receiver.released(m);
    }

    /** A user's send, arrived on the loop thread. */
    void enqueue(MessageBuffer b) {
        sender.enqueue(b);
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
            if (state != State.DRAINING && state != State.CLOSED) {
                receiver.postReposts();
            }
            if (state != State.OPEN && state != State.CLOSING) {
                return;
            }
            sender.flush();
            boolean now = isWritable();
            if (now != writable) {
                writable = now;
                handler.onWritabilityChanged(this);
            }
            if (state == State.CLOSING) {
                closing.continueClosing();
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    /** On the loop thread: posts what is queued now, not at the pass's end (a Netty flush is "to the wire"). */
    public void flushNow() {
        if (!dirty || !loop.inLoop() || (state != State.OPEN && state != State.CLOSING)) {
            return;
        }
        try {
            if (loop.sharedReceives != null) {
                loop.sharedReceives.postReposts(); // before the credits they back
            }
            receiver.postReposts();
            sender.flush();
        } catch (Throwable t) {
            fail(t);
        }
    }

    /** The connection ended underneath (the cm thread's report, run on the loop). */
    void onEnded(ConnectionEnd end) {
        closing.onEnded(end);
    }

    // ---- the abortive end (loop thread) ----

    /** Closes abortively with {@code t} as the cause; the first cause wins. */
    void fail(Throwable t) {
        if (state == State.DRAINING || state == State.CLOSED) {
            return;
        }
        cause = t;
        Log.LOG.info("{} fails: {}", name, t.toString());
        closing.startDrain();
    }

    /** The end, once the QP and every buffer are gone (Closing.finish): closeFuture and the handler hear it. */
    void ended(Throwable late) {
        if (cause == null) {
            cause = late;
        }
        loop.table.remove(this);
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

    ConfinedPoster poster() {
        return poster;
    }

    State state() {
        return state;
    }

    void state(State s) {
        state = s;
    }

    String name() {
        return name;
    }
}
