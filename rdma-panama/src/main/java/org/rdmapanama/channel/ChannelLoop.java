package org.rdmapanama.channel;

import org.rdmapanama.cm.SharedResources;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionChannel;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.CompletionWaiter;
import org.rdmapanama.verbs.ConfinedPoller;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.Wakeup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One thread, one completion queue, many channels. The thread polls the CQ
 * and dispatches each completion to its channel by the channel's id in the
 * work request id, runs what other threads hand over, then posts what the
 * channels accumulated (one post list each). Idle, it keeps polling for
 * {@link ChannelOptions#busyPollNanos()}, then arms the CQ and sleeps in
 * poll(2) on the completion channel and its wakeup.
 */
final class ChannelLoop implements AutoCloseable {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(ChannelLoop.class);
    }

    static final int MAX_CHANNELS = 1 << 16;

    final String name;
    final SharedResources shared;
    /** The channels' shared receive queue, or null when each QP has its own receives. */
    final SharedReceives sharedReceives;
    private final CompletionChannel completionChannel;
    private final CompletionQueue cq;
    private final Wakeup wakeup;
    private final long busyPollNanos;
    private final Thread thread;
    private final TaskQueue tasks = new TaskQueue();
    private volatile boolean sleeping;
    private volatile long sleeps; // written by the loop thread only
    private volatile boolean stopping;
    private volatile RdmaException failure;

    private final AtomicReferenceArray<MessageChannel> table = new AtomicReferenceArray<>(MAX_CHANNELS);
    private final int[] generations = new int[MAX_CHANNELS]; // guarded by this
    private final int[] freeIds = new int[MAX_CHANNELS]; // guarded by this
    private int freeIdCount; // guarded by this
    private int nextId; // guarded by this
    private int cqReserved; // guarded by this
    private int channels; // guarded by this
    private final int cqSize;

    private static final int CLOCK_EVERY = 64;
    private int idlePolls; // loop thread only: empty polls in a row
    private long idleSince; // loop thread only: when they began

    private MessageChannel dirtyHead; // loop thread only
    private final List<Closing> watched = new ArrayList<>(); // loop thread only

    ChannelLoop(String name, DeviceContext context, ProtectionDomain pd, BufferPool pool, ChannelOptions options)
            throws RdmaException {
        this.name = name;
        this.busyPollNanos = options.busyPollNanos();
        this.cqSize = options.cqSize();
        CompletionChannel ch = null;
        CompletionQueue q = null;
        Wakeup w = null;
        SharedReceives srq = null;
        try {
            ch = context.createCompletionChannel();
            q = context.createCompletionQueue(options.cqSize(), ch);
            w = Wakeup.create(name);
            srq = options.sharesReceives() ? new SharedReceives(name, pd, pool, options) : null;
        } catch (RdmaException | RuntimeException e) {
            for (AutoCloseable c : new AutoCloseable[] {srq, w, q, ch}) {
                if (c != null) {
                    Closer.quietly(c);
                }
            }
            throw e;
        }
        this.completionChannel = ch;
        this.cq = q;
        this.wakeup = w;
        this.sharedReceives = srq;
        this.shared = new SharedResources(pd, q, q, srq != null ? srq.queue : null);
        // A platform thread: it sleeps in poll(2), which would pin a virtual one.
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this::run);
        thread.start();
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** An id (and its generation) for a new channel that may have {@code cqEntries} completions outstanding. */
    synchronized long reserve(int cqEntries) throws RdmaException {
        RdmaException f = failure;
        if (f != null) {
            throw f;
        }
        if (stopping) {
            throw new org.rdmapanama.error.ClosedResourceException(name + " is closed");
        }
        if (cqReserved + cqEntries > cqSize) {
            throw new RdmaException(name + ": a channel needs " + cqEntries + " completion queue entries, and "
                    + (cqSize - cqReserved) + " of " + cqSize + " are left (" + channels
                    + " channels); raise ChannelOptions.cqSize or loops, or shrink the window");
        }
        int id;
        if (freeIdCount > 0) {
            id = freeIds[--freeIdCount];
        } else if (nextId < MAX_CHANNELS) {
            id = nextId++;
        } else {
            throw new RdmaException(name + " has " + MAX_CHANNELS + " channels already");
        }
        cqReserved += cqEntries;
        channels++;
        return (long) id << 32 | (generations[id] & 0xff);
    }

    /** Gives back a reservation whose channel was never made. */
    synchronized void unreserve(int id, int cqEntries) {
        generations[id]++;
        freeIds[freeIdCount++] = id;
        cqReserved -= cqEntries;
        channels--;
    }

    /** Makes {@code ch} reachable from its completions: before anything is posted for it. */
    void publish(MessageChannel ch) {
        table.set(ch.id, ch);
    }

    void unregister(MessageChannel ch) {
        table.compareAndSet(ch.id, ch, null);
        unreserve(ch.id, ch.cqEntries());
    }

    long wrId(MessageChannel ch, int kind, int index) {
        return (long) ch.id << 48 | (long) (ch.generation & 0xff) << 40 | (long) kind << 32 | (index & 0xffffffffL);
    }

    /** From another thread: {@code t} runs (or is dispatched) on the loop thread. */
    void handoff(LoopTask t) {
        tasks.push(t);
        if (sleeping) {
            wakeup.signal();
        }
    }

    /** How often the loop thread has gone to sleep in poll(2): for tests that must know it slept. */
    long sleeps() {
        return sleeps;
    }

    void execute(Runnable r) {
        if (inLoop()) {
            r.run();
        } else {
            handoff(LoopTask.of(r));
        }
    }

    void dirty(MessageChannel ch) {
        ch.dirtyNext = dirtyHead;
        dirtyHead = ch;
    }

    void watchDeadline(Closing c) {
        if (!watched.contains(c)) {
            watched.add(c);
        }
    }

    private void run() {
        try (CompletionWaiter waiter = completionChannel.newWaiter(wakeup);
             ConfinedPoller poller = cq.confinedPoller();
             CompletionBatch batch = cq.newBatch(64)) {
            while (!stopping) {
                turn(waiter, poller, batch);
            }
        } catch (RdmaException e) {
            loopFailed(e);
        } catch (RuntimeException | Error e) {
            loopFailed(new RdmaException(name + " failed: " + e, e));
            throw e;
        }
    }

    /**
     * One pass of the loop, a method of its own: the JIT then compiles it whole, as often as its profile
     * changes. As the body of {@link #run()} it was only ever compiled on stack, early, with the data path
     * called out of line and left in profiling code (docs/results/2026-12-07-channel-latency.md).
     */
    private void turn(CompletionWaiter waiter, ConfinedPoller poller, CompletionBatch batch) throws RdmaException {
        int work = runTasks() + poll(poller, batch);
        flushDirty();
        if (!watched.isEmpty()) {
            checkDeadlines();
        }
        if (work > 0) {
            idlePolls = 0;
            return;
        }
        // The clock is read once per CLOCK_EVERY empty polls: under emulation it costs as much as a poll.
        if (idlePolls++ % CLOCK_EVERY != 0 && busyPollNanos != 0) {
            Thread.onSpinWait();
            return;
        }
        long now = System.nanoTime();
        if (idlePolls == 1) {
            idleSince = now;
            if (busyPollNanos != 0) {
                return;
            }
        }
        if (now - idleSince < busyPollNanos) {
            Thread.onSpinWait();
            return;
        }
        cq.requestNotification(false);
        sleeping = true;
        if (!tasks.isEmpty() || stopping || poll(poller, batch) > 0) {
            sleeping = false; // came in before the arming took
            flushDirty();
            idlePolls = 0;
            return;
        }
        sleeps++;
        waiter.await(watched.isEmpty() ? -1 : Math.max(0, nearestDeadline() - now));
        sleeping = false;
        idlePolls = 0;
    }

    /** The CQ or the channel broke: every channel fails, and no new one is taken. */
    private void loopFailed(RdmaException e) {
        Log.LOG.error("channel loop {} stops: {}", name, e.getMessage());
        failure = e;
        for (int i = 0; i < MAX_CHANNELS; i++) {
            MessageChannel ch = table.get(i);
            if (ch != null) {
                ch.connection.fail(name + " failed: " + e.getMessage());
                table.set(i, null);
            }
        }
    }

    private int runTasks() {
        int n = 0;
        LoopTask t;
        while ((t = tasks.poll()) != null) {
            n++;
            try {
                if (t instanceof MessageBuffer b) {
                    b.channel.enqueue(b);
                } else if (t instanceof Message m) {
                    m.channel.released(m);
                } else {
                    t.run();
                }
            } catch (RuntimeException e) {
                Log.LOG.warn("a task on {} failed", name, e);
            }
        }
        return n;
    }

    private int poll(ConfinedPoller poller, CompletionBatch batch) throws RdmaException {
        int n = poller.poll(batch);
        if (n == 0 && sharedReceives != null) {
            sharedReceives.cqEmpty();
        }
        for (int i = 0; i < n; i++) {
            long wr = batch.wrId(i);
            if (((int) (wr >>> 32) & 0xf) == MessageChannel.KIND_SRQ) { // its channel is known by the QP only
                boolean ok = batch.isSuccess(i);
                sharedReceives.onCompletion(batch.qpNumber(i), (int) wr, ok, ok ? null : batch.status(i),
                        batch.byteLength(i), ok ? 0 : batch.vendorError(i));
                continue;
            }
            MessageChannel ch = table.get((int) (wr >>> 48));
            if (ch == null || (ch.generation & 0xff) != ((int) (wr >>> 40) & 0xff)) {
                continue; // of a channel that finished without waiting for its flush
            }
            boolean ok = batch.isSuccess(i);
            ch.onCompletion((int) (wr >>> 32) & 0xf, (int) wr, ok, ok ? null : batch.status(i), batch.byteLength(i),
                    ok ? 0 : batch.vendorError(i));
        }
        return n;
    }

    private void flushDirty() throws RdmaException {
        // An SRQ's slots are posted before any channel's flush carries the credits they back.
        if (sharedReceives != null) {
            sharedReceives.postReposts();
        }
        MessageChannel ch;
        while ((ch = dirtyHead) != null) {
            dirtyHead = ch.dirtyNext;
            ch.dirtyNext = null;
            ch.flush();
            if (sharedReceives != null) {
                sharedReceives.postReposts();
            }
        }
    }

    private void checkDeadlines() {
        long now = System.nanoTime();
        for (int i = watched.size() - 1; i >= 0; i--) {
            Closing c = watched.get(i);
            if (!c.watching()) {
                watched.remove(i);
            } else if (now - c.deadline() >= 0) {
                c.deadlinePassed(now);
            }
        }
    }

    private long nearestDeadline() {
        long d = watched.get(0).deadline();
        for (Closing c : watched) {
            if (c.deadline() - d < 0) {
                d = c.deadline();
            }
        }
        return d;
    }

    /** Stops the thread; its channels must be closed (the group closes them first). */
    @Override
    public void close() throws RdmaException {
        if (inLoop()) {
            throw new IllegalStateException("cannot close " + name + " from its own thread");
        }
        stopping = true;
        wakeup.signal();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmaException("interrupted while stopping " + name, e);
        }
        RdmaException first = Closer.closeAll(null, sharedReceives, cq, completionChannel);
        wakeup.close();
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
