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


/**
 * One thread, one completion queue, many channels. A pass polls the CQ and
 * dispatches each completion to its channel by the channel's id in the work
 * request id, runs what other threads handed over, then posts what the
 * channels accumulated (one post list each). Idle, the thread arms the CQ and
 * sleeps in poll(2) on the completion channel and its wakeup. The thread is
 * the loop's own ({@link LoopThread}) or a driver's ({@link DrivenLoop}).
 */
final class ChannelLoop implements AutoCloseable {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(ChannelLoop.class);
    }

    final String name;
    final SharedResources shared;
    /** The channels' shared receive queue, or null when each QP has its own receives. */
    final SharedReceives sharedReceives;
    private final CompletionChannel completionChannel;
    private final CompletionQueue cq;
    private final Wakeup wakeup;
    private volatile Thread thread; // from attach(): its own, or the driver's
    private Thread started; // its own
    private final TaskQueue tasks = new TaskQueue();
    private volatile boolean sleeping;
    private volatile long sleeps; // written by the loop thread only
    private volatile boolean stopping;
    private volatile RdmaException failure;
    private volatile boolean closed;

    final ChannelTable table;
    private final Keepalive keepalive; // null: off
    /** Connections being made with a QP on this loop's CQ, not channels yet. */
    private final java.util.concurrent.atomic.AtomicInteger settingUp = new java.util.concurrent.atomic.AtomicInteger();

    private MessageChannel dirtyHead; // loop thread only
    private final Deadlines deadlines = new Deadlines(); // loop thread only

    // Confined to the loop thread, made there.
    private CompletionWaiter waiter;
    private ConfinedPoller poller;
    private CompletionBatch batch;

    ChannelLoop(String name, DeviceContext context, ProtectionDomain pd, BufferPool pool, ChannelOptions options,
                boolean ownThread) throws RdmaException {
        this.name = name;
        this.table = new ChannelTable(name, options.cqSize());
        this.keepalive = options.keepaliveNanos() > 0 ? new Keepalive(options.keepaliveNanos(), table) : null;
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
        if (ownThread) {
            // A platform thread: it sleeps in poll(2), which would pin a virtual one.
            Thread t = Thread.ofPlatform().name(name).daemon(true).unstarted(new LoopThread(this, options.busyPollNanos()));
            this.started = t;
            t.start();
        }
    }

    /** The calling thread becomes the loop's: its confined poller and waiter are made on it. */
    void attach() throws RdmaException {
        if (thread != null) {
            throw new IllegalStateException(name + " already runs on " + thread.getName());
        }
        openConfined();
        thread = Thread.currentThread();
    }

    private void openConfined() throws RdmaException {
        CompletionWaiter w = completionChannel.newWaiter(wakeup);
        try {
            poller = cq.confinedPoller();
            batch = cq.newBatch(64);
        } catch (RuntimeException e) {
            Closer.quietly(w);
            if (poller != null) {
                Closer.quietly(poller);
            }
            throw e;
        }
        waiter = w;
    }

    void closeConfined() {
        for (AutoCloseable c : new AutoCloseable[] {batch, poller, waiter}) {
            if (c != null) {
                Closer.quietly(c);
            }
        }
        batch = null;
        poller = null;
        waiter = null;
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** An id (and its generation) for a new channel that may have {@code cqEntries} completions outstanding. */
    long reserve(int cqEntries) throws RdmaException {
        RdmaException f = failure;
        if (f != null) {
            throw f;
        }
        if (stopping) {
            throw new org.rdmapanama.error.ClosedResourceException(name + " is closed");
        }
        return table.reserve(cqEntries);
    }

    long wrId(MessageChannel ch, int kind, int index) {
        return (long) ch.id << 48 | (long) (ch.generation & 0xff) << 40 | (long) kind << 32 | (index & 0xffffffffL);
    }

    /** From another thread: {@code t} runs (or is dispatched) on the loop thread. */
    void handoff(LoopTask t) {
        tasks.push(t);
        wakeup();
    }

    /** Wakes the loop if it sleeps (or is about to: {@link #armSleep} checks the tasks after it says so). */
    void wakeup() {
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
        deadlines.watch(c);
    }

    /** One pass without waiting: handed-over tasks, a batch of completions, the posts they led to, deadlines. */
    int runOnce() throws RdmaException {
        if (failure != null) {
            return 0;
        }
        try {
            int work = runTasks() + poll();
            flushDirty();
            if (!deadlines.isEmpty()) {
                deadlines.check();
            }
            if (keepalive != null && keepalive.pass()) {
                flushDirty();
            }
            return work;
        } catch (RdmaException e) {
            loopFailed(e);
            throw e;
        } catch (RuntimeException e) {
            loopFailed(new RdmaException(name + " failed: " + e, e));
            throw e;
        }
    }

    /**
     * Arms the CQ and says the loop sleeps; false (awake again, with what came in posted) when a task or
     * completion arrived before the arming took. After true, {@link #sleep} or {@link #disarm}.
     */
    boolean armSleep() throws RdmaException {
        cq.requestNotification(false);
        sleeping = true;
        if (!tasks.isEmpty() || stopping || poll() > 0) {
            sleeping = false;
            flushDirty();
            return false;
        }
        return true;
    }

    /** Sleeps in poll(2) until a completion, a wakeup, {@code timeoutNanos} (negative: none) or a close deadline. */
    void sleep(long timeoutNanos) throws RdmaException {
        long t = timeoutNanos;
        if (!deadlines.isEmpty()) {
            long d = deadlines.nanosToNearest();
            t = t < 0 ? d : Math.min(t, d);
        }
        if (keepalive != null) {
            long k = keepalive.nanosToNext();
            t = t < 0 ? k : Math.min(t, k);
        }
        sleeps++;
        try {
            waiter.await(t);
        } finally {
            sleeping = false;
        }
        if (keepalive != null && keepalive.tick(System.nanoTime())) {
            flushDirty();
        }
    }

    /** Armed but not going to sleep after all (the driver found work of its own). */
    void disarm() {
        sleeping = false;
    }

    boolean stopping() {
        return stopping;
    }

    /** The loop's channels, open or closing, and those being set up. */
    int channels() {
        return table.count() + settingUp.get();
    }

    /** A connection with its QP on this loop's CQ is being made: the loop does not close under it. */
    void setupBegins() {
        settingUp.incrementAndGet();
    }

    /** ... and is now a channel of the loop, or closed. */
    void setupEnds() {
        settingUp.decrementAndGet();
    }

    /** Abortively closes every channel of the loop (on the loop thread): they finish as their flushes come in. */
    void failAll(Throwable cause) {
        table.forEach(ch -> ch.fail(cause), false);
    }

    /** The CQ or the channel broke: every channel fails, and no new one is taken. */
    void loopFailed(RdmaException e) {
        if (failure != null) {
            return;
        }
        Log.LOG.error("channel loop {} stops: {}", name, e.getMessage());
        failure = e;
        table.forEach(ch -> ch.connection.fail(name + " failed: " + e.getMessage()), true);
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

    private int poll() throws RdmaException {
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
            MessageChannel ch = table.get((int) (wr >>> 48), (int) (wr >>> 40) & 0xff);
            if (ch == null) {
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

    /**
     * Stops the loop's own thread (its channels must be closed: the group closes them first), or frees a
     * driven loop that no thread ever attached to.
     */
    @Override
    public void close() throws RdmaException {
        if (inLoop()) {
            throw new IllegalStateException("cannot close " + name + " from its own thread");
        }
        if (closed) {
            return;
        }
        Thread t = started;
        if (t == null && thread != null) {
            throw new IllegalStateException(name + " runs on " + thread.getName() + ", which must close it");
        }
        stopping = true;
        wakeup.signal();
        if (t != null) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RdmaException("interrupted while stopping " + name, e);
            }
        }
        freeResources();
    }

    /** A driven loop's end, on its thread: no channel is taken any more. */
    void stop() {
        stopping = true;
    }

    boolean failed() {
        return failure != null;
    }

    boolean closed() {
        return closed;
    }

    void freeResources() throws RdmaException {
        closed = true;
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
