package org.rdmapanama.channel;

import org.rdmapanama.cm.CmContexts;
import org.rdmapanama.cm.CmEventLoop;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePairCaps;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Message channels on one device: its protection domain, one buffer pool,
 * and {@link ChannelOptions#loops()} event-loop threads, each with a
 * completion queue its channels share (and, for a framework that brings its
 * own threads, {@link #newDrivenLoop() driven loops}). Channels come from
 * {@link #connect} and from the servers of {@link #listen}. Closing the group
 * closes them all.
 */
public final class ChannelGroup implements AutoCloseable {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(ChannelGroup.class);
    }

    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(15);
    private static final long POOL_LIMIT = 4L << 30;
    private static final AtomicInteger GROUPS = new AtomicInteger();

    private final ChannelOptions options;
    private final Selection selection;
    private final InetAddress address;
    private final String name;
    private final CmEventLoop cmLoop;
    private final DeviceContext context;
    private final ProtectionDomain pd;
    private final BufferPool pool;
    private final ChannelLoop[] loops;
    private final ConnectionOptions connectionOptions;
    private final int sqDepth;
    private final AtomicInteger nextLoop = new AtomicInteger();
    private final Set<MessageChannel> channels = ConcurrentHashMap.newKeySet();
    private final Set<ChannelServer> servers = ConcurrentHashMap.newKeySet();
    private final Set<DrivenLoop> driven = ConcurrentHashMap.newKeySet();
    private final AtomicInteger drivenCount = new AtomicInteger();
    private volatile boolean closed;

    private ChannelGroup(Selection selection, ChannelOptions options) throws RdmaException {
        this.options = options;
        this.selection = selection;
        this.address = selection.ipAddress();
        this.name = "rdma-channel-" + GROUPS.incrementAndGet() + "-" + selection.device().name();
        var caps = selection.device().capabilities();
        // Room for a window of sends, its control messages and reads, within what the device allows.
        this.sqDepth = Math.min(2 * options.window() + 8, caps.maxQpWr() - 1);
        int readDepth = Math.max(1, Math.min(4, Math.min(caps.maxQpRdAtom(), caps.maxQpInitRdAtom())));
        int recvDepth = options.window() + 2;
        // rnr_retry 0: credits promise a posted receive for every send, so a missing one is a bug to see, not to wait out.
        // retry 6: rxe takes 7 as "forever", which would hide a dead peer. ACK timeout 14 (67 ms, perftest's
        // default): rdma_cm's left a silent link unseen for 16 s on rxe0, this one ends it within about 0.5 s.
        this.connectionOptions = new ConnectionOptions(
                new QueuePairCaps(sqDepth + 1, recvDepth + 1, 1, 1, options.inlineSize(), false),
                sqDepth + recvDepth + 2, readDepth, 6, 0, 14);
        List<AutoCloseable> made = new ArrayList<>();
        boolean ok = false;
        try {
            this.cmLoop = CmEventLoop.create(name + "-cm");
            made.add(cmLoop);
            this.context = CmContexts.open(selection.device().name());
            made.add(context);
            this.pd = context.allocateProtectionDomain();
            made.add(pd);
            this.pool = new BufferPool(pd, options.slotSize(), options.maxMessageSize(), POOL_LIMIT);
            made.add(pool);
            this.loops = new ChannelLoop[options.loops()];
            for (int i = 0; i < loops.length; i++) {
                loops[i] = new ChannelLoop(name + "-loop-" + i, context, pd, pool, options, true);
                made.add(loops[i]);
            }
            ok = true;
        } finally {
            if (!ok) {
                for (int i = made.size() - 1; i >= 0; i--) {
                    Closer.quietly(made.get(i));
                }
            }
        }
    }

    /**
     * A group on the device, port and transport that {@code config} selects
     * ({@code transport=iwarp}, {@code device=rxe0}, ...; {@link RdmaConfig#load()}
     * reads them from the environment).
     *
     * @throws org.rdmapanama.error.NoSuchDeviceException naming what exists, when nothing matches
     */
    public static ChannelGroup open(RdmaConfig config, ChannelOptions options) throws RdmaException {
        return new ChannelGroup(Selection.select(config, RdmaDevices.list()), options);
    }

    public Selection selection() {
        return selection;
    }

    /** The IP address of the selected device's interface: what {@link #listen} binds to and peers connect to. */
    public InetAddress address() {
        return address;
    }

    public ChannelOptions options() {
        return options;
    }

    /** The most memory the pool registers: past it, the channels' sends and rendezvous receives fail. */
    public long poolLimit() {
        return POOL_LIMIT;
    }

    /** Bytes of memory registered for the pool so far. */
    public long registeredBytes() {
        return pool.registeredBytes();
    }

    /**
     * A registered buffer of the group's pool with room for {@code bytes}, for any of its channels: fill it,
     * then {@link MessageChannel#send} it on one (a framework's allocator hands such buffers out before it
     * knows the channel). Up to {@link ChannelOptions#maxMessageSize()} bytes.
     */
    public MessageBuffer allocate(int bytes) throws RdmaException {
        if (closed) {
            throw new ClosedResourceException(name + " is closed");
        }
        return pool.allocate(bytes);
    }

    /** Channels open or closing. */
    public int channelCount() {
        return channels.size();
    }

    private void requireOwnLoops() {
        if (loops.length == 0) {
            throw new IllegalStateException(name + " has no loops of its own (ChannelOptions.loops is 0):"
                    + " connect and accept on a DrivenLoop");
        }
    }

    private ChannelLoop nextLoop() {
        requireOwnLoops();
        return loops[Math.floorMod(nextLoop.getAndIncrement(), loops.length)];
    }

    /**
     * A loop with its own completion queue (and shared receive queue, by the options) but no thread: the
     * caller's thread turns it. Close it on that thread before the group.
     */
    public DrivenLoop newDrivenLoop() throws RdmaException {
        if (closed) {
            throw new ClosedResourceException(name + " is closed");
        }
        ChannelLoop l = new ChannelLoop(name + "-driven-" + drivenCount.getAndIncrement(), context, pd, pool,
                options, false);
        DrivenLoop d = new DrivenLoop(this, l);
        driven.add(d);
        return d;
    }

    void drivenClosed(DrivenLoop d) {
        driven.remove(d);
    }

    /**
     * Connects to a {@link #listen}ing group at {@code remote}; the future
     * completes with the channel once it is open (on its loop thread: a
     * dependent stage must not block), or with why it could not be.
     */
    public CompletableFuture<MessageChannel> connect(InetSocketAddress remote, MessageHandler handler) {
        return connect(remote, handler, nextLoop(), SETUP_TIMEOUT);
    }

    /** {@link #connect(InetSocketAddress, MessageHandler)} with the channel on {@code loop}. */
    public CompletableFuture<MessageChannel> connect(InetSocketAddress remote, MessageHandler handler,
                                                     DrivenLoop loop) {
        return connect(remote, handler, loop.loop, SETUP_TIMEOUT);
    }

    /**
     * {@link #connect(InetSocketAddress, MessageHandler)} with the channel on {@code loop}, given up after
     * {@code timeout} for each of the route's resolution and the connection's set-up. Cancelling the future
     * abandons the attempt (a channel already made is aborted).
     */
    public CompletableFuture<MessageChannel> connect(InetSocketAddress remote, MessageHandler handler,
                                                     DrivenLoop loop, Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the connect timeout must be positive, got " + timeout);
        }
        return connect(remote, handler, loop.loop, timeout);
    }

    private CompletableFuture<MessageChannel> connect(InetSocketAddress remote, MessageHandler handler,
                                                      ChannelLoop loop, Duration timeout) {
        if (closed) {
            return CompletableFuture.failedFuture(new ClosedResourceException(name + " is closed"));
        }
        return new Connect(this, remote, handler, loop).start(connectionOptions, timeout, cmLoop);
    }

    /** Listens on {@code port} of {@link #address()}; every channel a peer opens is handled by {@code handler}. */
    public ChannelServer listen(int port, MessageHandler handler) throws RdmaException {
        return listen(new InetSocketAddress(address, port), handler);
    }

    public ChannelServer listen(InetSocketAddress at, MessageHandler handler) throws RdmaException {
        requireOwnLoops(); // now, not at the first request
        return listen(at, handler, null);
    }

    /** Listens on {@code at}, and hands each peer's request to {@code acceptor}, which chooses its loop. */
    public ChannelServer listen(InetSocketAddress at, ChannelAcceptor acceptor) throws RdmaException {
        return listen(at, null, java.util.Objects.requireNonNull(acceptor, "acceptor"));
    }

    private ChannelServer listen(InetSocketAddress at, MessageHandler handler, ChannelAcceptor acceptor)
            throws RdmaException {
        if (closed) {
            throw new ClosedResourceException(name + " is closed");
        }
        ChannelServer s = new ChannelServer(this, at, handler, acceptor, connectionOptions, cmLoop);
        servers.add(s);
        return s;
    }

    void serverClosed(ChannelServer s) {
        servers.remove(s);
    }

    ChannelLoop loopForAccept() {
        return nextLoop();
    }

    byte[] privateData() {
        return Wire.privateData(options.window() + 1, options.slotSize(), options.maxMessageSize());
    }

    /** A channel on {@code loop} for {@code conn}, its receives posted; not open until {@link #open}. */
    MessageChannel newChannel(ChannelLoop loop, RdmaConnection conn, MessageHandler handler, String what)
            throws RdmaException {
        int entries = MessageChannel.cqEntries(options, sqDepth);
        long reservation = loop.reserve(entries);
        int id = (int) (reservation >>> 32);
        MessageChannel ch;
        try {
            ch = new MessageChannel(loop, id, (int) reservation, conn, handler, pool, options, sqDepth,
                    connectionOptions.rdmaReadDepth(), what + " on " + selection.device().name());
        } catch (RdmaException | RuntimeException e) {
            loop.table.unreserve(id, entries);
            throw e;
        }
        loop.table.publish(ch);
        channels.add(ch);
        ch.closeFuture().whenComplete((v, e) -> channels.remove(ch));
        try {
            ch.postInitialReceives();
        } catch (RdmaException | RuntimeException e) {
            ch.abort(e);
            throw e;
        }
        return ch;
    }

    /** Connected: reads the peer's promises, and opens the channel on its loop. */
    void open(MessageChannel ch, RdmaConnection conn, CompletableFuture<MessageChannel> result) {
        Wire.Peer peer;
        try {
            peer = Wire.peer(conn.peerPrivateData());
        } catch (ProtocolException e) {
            ch.abort(e);
            result.completeExceptionally(e);
            return;
        }
        conn.ended().thenAccept(end -> ch.loop.execute(() -> ch.onEnded(end)));
        conn.queuePair().fatalEvent().thenAccept(ev -> ch.abort(new RdmaException(ch + ": the device reported "
                + ev + " for its queue pair")));
        ch.loop.execute(() -> {
            ch.activate(peer);
            if (ch.isOpen()) {
                if (!result.complete(ch)) {
                    ch.abort(new java.util.concurrent.CancellationException(ch + ": its connect was cancelled"));
                }
            } else {
                ch.closeFuture().whenComplete((v, e) -> result.completeExceptionally(e != null ? e
                        : new ClosedResourceException(ch + " closed while opening")));
            }
        });
    }

    /**
     * Closes servers and channels (abortively: pending sends are dropped;
     * close channels first for a graceful end), then the loops, the pool and
     * the device objects. Not from a loop thread.
     */
    @Override
    public void close() throws RdmaException {
        for (ChannelLoop l : loops) {
            if (l.inLoop()) {
                throw new IllegalStateException("cannot close " + name + " from its loop thread " + l);
            }
        }
        for (DrivenLoop d : driven) {
            if (d.inLoop()) {
                throw new IllegalStateException("cannot close " + name + " from the thread of " + d);
            }
        }
        if (closed) {
            return;
        }
        closed = true;
        for (ChannelServer s : List.copyOf(servers)) {
            Closer.quietly(s);
        }
        List<CompletableFuture<Void>> ends = new ArrayList<>();
        for (MessageChannel ch : List.copyOf(channels)) {
            ends.add(ch.closeFuture());
            ch.abort(new ClosedResourceException(name + " was closed"));
        }
        try {
            CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new)).exceptionally(e -> null)
                    .get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            Log.LOG.warn("{}: {} channels did not finish closing within 5 s", name, channels.size());
        }
        RdmaException first = null;
        for (DrivenLoop d : List.copyOf(driven)) {
            try {
                d.close(); // refuses a loop its thread still turns: that thread must close it
            } catch (IllegalStateException e) {
                Log.LOG.warn("{}: {} (its objects stay until then)", name, e.getMessage());
            } catch (RdmaException e) {
                first = first == null ? e : first;
            }
        }
        for (int i = loops.length - 1; i >= 0; i--) {
            try {
                loops[i].close();
            } catch (RdmaException e) {
                first = first == null ? e : first;
            }
        }
        first = Closer.closeAll(first, pool, pd, context);
        try {
            cmLoop.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            Log.LOG.warn("closing {}: {}", cmLoop, e.toString());
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
