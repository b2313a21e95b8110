package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.verbs.Wakeup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * One rdma_cm event channel and the one thread that reads it: every cm_id of
 * the connections and listeners made with this loop lives on the channel, and
 * the thread hands each event, copied and acked, to its cm_id's owner. The
 * thread sleeps in poll(2) on the channel and a {@link Wakeup}, so a close, a new
 * timer or a stop wakes it at once; timers (every setup step's timeout) run
 * on it too.
 * <p>
 * {@link #shared()} is the process's loop, started on first use and never
 * stopped; {@link #create} makes a separate group (its own channel and
 * thread), closed once its connections and listeners are.
 * <p>
 * Futures of the asynchronous API complete on this thread: a stage that
 * blocks (or calls the blocking API) stalls every connection of the group.
 */
public final class CmEventLoop implements AutoCloseable {
    private static final class Log { // lazily: see org.rdmapanama.internal.Cleanup
        static final Logger LOG = LoggerFactory.getLogger(CmEventLoop.class);
    }
    private static final Object SHARED_LOCK = new Object();
    private static volatile CmEventLoop shared;

    /** Receives the events of one cm_id, on the loop thread, after they were acked. */
    interface Target {
        void onEvent(CmEvent event);

        /** The channel failed: no event will come any more. */
        void onLoopFailure(RdmaException e);
    }

    /**
     * A timer; {@link #cancel} only marks it: the loop skips it, and drops it
     * once it reaches the head of the queue (the loop may still wake at its
     * deadline if it went to sleep with it at the head).
     */
    static final class Timer implements Comparable<Timer> {
        final long deadline;
        long seq; // set by the loop thread as it queues the timer
        final Runnable action;
        volatile boolean cancelled;

        Timer(long deadline, Runnable action) {
            this.deadline = deadline;
            this.action = action;
        }

        void cancel() {
            cancelled = true;
        }

        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(deadline - o.deadline, 0); // nanoTime order, overflow-safe
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final String name;
    private final EventChannel channel;
    private final Wakeup wakeup;
    private final Thread thread;
    private final boolean isShared;
    private final ConcurrentHashMap<Long, Target> targets = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Timer> newTimers = new ConcurrentLinkedQueue<>();
    private final PriorityQueue<Timer> timers = new PriorityQueue<>(); // loop thread only
    private long timerSeq; // loop thread only
    /**
     * When the loop thread will wake by itself: {@link #AWAKE} while it runs,
     * {@link #NEVER} for a poll without timeout, else the deadline of its
     * earliest timer. A timer scheduled from another thread wakes the loop
     * only if it is due before that: every set-up step has a timeout, and most
     * are seconds away, so most schedules cost no wake-up (a context switch
     * of the loop thread, under emulation a good part of a connection).
     */
    private volatile long wakesAt = AWAKE;
    private static final long AWAKE = Long.MIN_VALUE;
    private static final long NEVER = Long.MAX_VALUE;
    private volatile boolean stopping;
    private volatile RdmaException failure;

    private CmEventLoop(String name, boolean isShared) throws RdmaException {
        this.name = name;
        this.isShared = isShared;
        this.channel = EventChannel.create();
        try {
            this.wakeup = Wakeup.create("wake-up of " + name);
        } catch (RdmaException | RuntimeException e) {
            channel.close();
            throw e;
        }
        // A platform thread: it blocks in poll(2), which would pin a virtual one.
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this::run);
        thread.start();
    }

    /** The process's loop, started on first use (which also loads and links librdmacm). */
    public static CmEventLoop shared() throws RdmaException {
        CmEventLoop l = shared;
        if (l == null) {
            synchronized (SHARED_LOCK) {
                l = shared;
                if (l == null) {
                    shared = l = new CmEventLoop("rdma-cm-loop", true);
                }
            }
        }
        return l;
    }

    /** A loop of its own for a group of connections and listeners, named {@code name} (its thread's name). */
    public static CmEventLoop create(String name) throws RdmaException {
        return new CmEventLoop(name, false);
    }

    public String name() {
        return name;
    }

    EventChannel channel() {
        return channel;
    }

    boolean onLoopThread() {
        return Thread.currentThread() == thread;
    }

    /** Throws when called on the loop thread, where a blocking wait would wait for itself. */
    void refuseBlockingOnLoop(String op) {
        if (onLoopThread()) {
            throw new IllegalStateException("cannot " + op + " blocking on the rdma_cm event loop thread " + name
                    + ", which delivers the event it would wait for; use the asynchronous variant");
        }
    }

    void register(MemorySegment id, Target target) throws RdmaException {
        RdmaException f = failure;
        if (f != null) {
            throw f;
        }
        if (stopping) {
            throw new IllegalStateException("the rdma_cm event loop " + name + " is closed");
        }
        targets.put(id.address(), target);
    }

    /** Before rdma_destroy_id: see {@link #dispatch} for why the order matters. */
    void unregister(MemorySegment id) {
        targets.remove(id.address());
    }

    /** Runs {@code task} on the loop thread (at once when called there). */
    void execute(Runnable task) {
        if (onLoopThread()) {
            task.run();
            return;
        }
        synchronized (this) { // against close: a task queued once stopping would never run
            if (stopping) {
                throw new IllegalStateException("the rdma_cm event loop " + name + " is closed");
            }
            tasks.add(task);
            wakeup.signal();
        }
    }

    /** Runs {@code action} on the loop thread at {@code deadline} ({@link System#nanoTime}), unless cancelled. */
    Timer schedule(long deadline, Runnable action) {
        Timer t = new Timer(deadline, action);
        if (onLoopThread()) {
            queue(t);
            return t;
        }
        if (stopping) {
            throw new IllegalStateException("the rdma_cm event loop " + name + " is closed");
        }
        newTimers.add(t);
        // The loop publishes wakesAt, then looks at newTimers; we added, then look
        // at wakesAt: both volatile, so either it sees the timer or we see its sleep.
        long w = wakesAt;
        if (w != AWAKE && (w == NEVER || deadline - w < 0)) {
            wakeup.signal(); // a no-op once the loop closed it: never a write to a reused fd number
        }
        return t;
    }

    private void queue(Timer t) {
        t.seq = timerSeq++;
        timers.add(t);
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Posix.Scratch scratch = new Posix.Scratch(arena);
            while (!stopping) {
                runTasks();
                long now = System.nanoTime();
                runTimers(now);
                int timeout = -1;
                Timer next = timers.peek();
                wakesAt = next == null ? NEVER : sleepDeadline(next.deadline);
                if (!tasks.isEmpty() || !newTimers.isEmpty()) {
                    timeout = 0;
                } else if (next != null) {
                    // Round up: waking before the deadline would only poll again.
                    long left = next.deadline - System.nanoTime();
                    timeout = left <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
                }
                int ready = Posix.pollBoth(scratch, channel.fd(), wakeup.fd(), timeout);
                wakesAt = AWAKE;
                if (ready < 0) {
                    throw org.rdmapanama.internal.Errno.failure("poll", name, ready);
                }
                if ((ready & Posix.SECOND_READABLE) != 0) {
                    wakeup.drain();
                }
                if ((ready & Posix.FIRST_FAILED) != 0) {
                    throw org.rdmapanama.internal.Errno.failure("poll", "rdma_cm event channel of " + name,
                            -org.rdmapanama.internal.Errno.EIO);
                }
                if ((ready & Posix.FIRST_READABLE) != 0) {
                    // A bounded batch, so that timers and tasks are not starved by a flood.
                    for (int i = 0; i < 64 && dispatch(out); i++) {
                        // next
                    }
                }
            }
        } catch (RdmaException e) {
            fail(e);
        } catch (RuntimeException | Error e) {
            fail(new CmException("the rdma_cm event loop " + name + " failed: " + e, null, 0));
            throw e;
        } finally {
            synchronized (this) {
                if (stopping) {
                    org.rdmapanama.internal.Cleanup.closeQuietly(channel);
                    wakeup.close();
                }
            }
        }
    }

    private void fail(RdmaException e) {
        Log.LOG.error("rdma_cm event loop {} stops: {}", name, e.getMessage());
        failure = e;
        for (Target t : List.copyOf(targets.values())) {
            try {
                t.onLoopFailure(e);
            } catch (RuntimeException x) {
                Log.LOG.warn("after the failure of {}: {}", name, x.toString());
            }
        }
    }

    private void runTasks() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            safely(r);
        }
    }

    private void runTimers(long now) {
        Timer t;
        while ((t = newTimers.poll()) != null) {
            queue(t);
        }
        while ((t = timers.peek()) != null && (t.cancelled || t.deadline - now <= 0)) {
            timers.poll();
            if (!t.cancelled) {
                safely(t.action);
            }
        }
    }

    /** A deadline as {@link #wakesAt} holds it: never one of the two markers. */
    private static long sleepDeadline(long deadline) {
        return deadline == AWAKE ? AWAKE + 1 : deadline == NEVER ? NEVER - 1 : deadline;
    }

    private void safely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            Log.LOG.warn("a task on the rdma_cm event loop {} failed", name, e);
        }
    }

    /**
     * Reads, copies, acks and hands over one event; false when none was waiting.
     * The owner is looked up before the ack: until the ack, rdma_destroy_id of
     * that cm_id cannot return, so its address cannot have been reused by a new
     * cm_id (owners unregister before they destroy). Nothing is destroyed here
     * before the ack, as librdmacm would wait for it forever.
     */
    private boolean dispatch(MemorySegment out) throws RdmaException {
        MemorySegment raw = channel.poll(out);
        if (raw == null) {
            return false;
        }
        CmEvent ev;
        Target target;
        try {
            ev = EventChannel.copy(raw);
            target = targets.get(EventChannel.target(raw).address());
        } finally {
            EventChannel.ack(raw);
        }
        if (target != null) {
            try {
                target.onEvent(ev);
            } catch (RuntimeException e) {
                Log.LOG.warn("handling {} on {}", ev.type(), name, e);
            }
        } else if (ev.type() == CmEventType.CONNECT_REQUEST) {
            // The listener is gone: refuse the request (destroying an unaccepted id rejects it).
            destroyUnowned(ev.id());
        } else {
            Log.LOG.debug("{} for a cm_id nobody owns any more, dropped", ev.type());
        }
        return true;
    }

    /** Destroys a cm_id nobody owns (a request whose listener is gone), logging a failure. */
    static void destroyUnowned(MemorySegment id) {
        try {
            org.rdmapanama.internal.Cm.DESTROY_ID.status("an unowned cm_id", id);
        } catch (RdmaException e) {
            Log.LOG.debug("rdma_destroy_id: {}", e.getMessage());
        }
    }

    /**
     * Stops a group's thread and frees its channel. Refused while connections
     * or listeners of the group are open, and for {@link #shared()}.
     */
    @Override
    public void close() throws InterruptedException {
        if (isShared) {
            throw new IllegalStateException("the shared rdma_cm event loop lives as long as the process");
        }
        if (!targets.isEmpty()) {
            throw new IllegalStateException("the rdma_cm event loop " + name + " still has " + targets.size()
                    + " connections or listeners open");
        }
        synchronized (this) {
            if (stopping) {
                return;
            }
            stopping = true;
            wakeup.signal(); // the thread closes it on its way out
        }
        if (!onLoopThread()) {
            thread.join();
            wakeup.close(); // a loop that failed before it stopped left it open
        }
    }

    @Override
    public String toString() {
        return "rdma_cm event loop " + name;
    }
}
