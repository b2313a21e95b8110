package org.rdmapanama.netty;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import org.rdmapanama.channel.DrivenLoop;
import org.rdmapanama.error.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The I/O of one Netty event loop: a {@link DrivenLoop} (completion queue,
 * completion channel, wakeup) that the event loop's thread turns between its
 * tasks, polling while there is work, spinning for the group's busy-poll time,
 * then sleeping on the completion channel until a completion, a task or the
 * next scheduled task. The loop is made on first use, so an event loop that
 * only runs server channels (a boss) makes none and parks as Netty's local
 * transport does.
 */
public final class RdmaIoHandler implements IoHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaIoHandler.class);
    /** Empty passes before reading the clock: under emulation a clock read costs about a poll. */
    private static final int SPINS = 64;
    private static final long DRAIN_NANOS = 1_000_000_000L;

    private final RdmaTransport transport;
    private final ThreadAwareExecutor executor;
    private final Set<RdmaIoHandle> handles = new HashSet<>();
    private final ArrayDeque<RdmaIoHandle> readers = new ArrayDeque<>();
    private volatile DrivenLoop loop;
    private volatile Thread thread;
    private volatile boolean wakeRequested;
    private volatile boolean failed; // read by wakeup() on other threads
    private long idleSince;

    private RdmaIoHandler(RdmaTransport transport, ThreadAwareExecutor executor) {
        this.transport = transport;
        this.executor = executor;
    }

    public static IoHandlerFactory newFactory(RdmaTransport transport) {
        java.util.Objects.requireNonNull(transport, "transport");
        return executor -> new RdmaIoHandler(transport, executor);
    }

    @Override
    public void initialize() {
        thread = Thread.currentThread();
    }

    /** The loop, made and attached on first use (on the event loop's thread). */
    DrivenLoop loop() throws RdmaException {
        DrivenLoop l = loop;
        if (l == null) {
            l = transport.group().newDrivenLoop();
            try {
                l.attach();
            } catch (RdmaException | RuntimeException e) {
                try {
                    l.close();
                } catch (RdmaException | RuntimeException x) {
                    e.addSuppressed(x);
                }
                throw e;
            }
            loop = l;
        }
        return l;
    }

    RdmaTransport transport() {
        return transport;
    }

    /** A channel fired reads in this pass; it hears {@link RdmaIoHandle#readsDone()} once the pass is over. */
    void readsFired(RdmaIoHandle h) {
        readers.add(h);
    }

    @Override
    public int run(IoHandlerContext ctx) {
        DrivenLoop l = loop;
        if (l == null || failed) {
            if (ctx.canBlock()) {
                LockSupport.parkNanos(this, ctx.delayNanos(System.nanoTime()));
            }
            return 0;
        }
        try {
            int work = turn(l);
            if (work > 0 || !ctx.canBlock()) {
                idleSince = 0;
                return work;
            }
            for (int i = 0; i < SPINS && !wakeRequested; i++) {
                work = turn(l);
                if (work > 0) {
                    idleSince = 0;
                    return work;
                }
            }
            long now = System.nanoTime();
            if (idleSince == 0) {
                idleSince = now;
            }
            // Within the busy-poll budget, hand back: Netty runs what became due and calls again.
            if (!wakeRequested && now - idleSince < Math.min(l.busyPollNanos(), ctx.delayNanos(now))) {
                return 0;
            }
            if (!l.armSleep()) {
                fireReadsDone();
                idleSince = 0;
                return 1;
            }
            // Armed, then Netty's queue looked at: a task offered before wakeup() read the arming is seen here.
            if (wakeRequested || !ctx.canBlock()) {
                l.disarm();
                wakeRequested = false;
                return 0;
            }
            l.sleep(ctx.delayNanos(System.nanoTime()));
            wakeRequested = false;
            idleSince = 0;
            return turn(l);
        } catch (RdmaException | RuntimeException e) {
            // The completion queue broke: its channels have failed; keep serving Netty's tasks.
            failed = true;
            LOG.error("{}: the loop failed, its channels with it", l, e);
            fireReadsDone();
            return 1;
        }
    }

    private int turn(DrivenLoop l) throws RdmaException {
        int work = l.runOnce();
        fireReadsDone();
        return work;
    }

    private void fireReadsDone() {
        RdmaIoHandle h;
        while ((h = readers.poll()) != null) {
            try {
                h.readsDone();
            } catch (RuntimeException e) {
                LOG.warn("channelReadComplete failed", e);
            }
        }
    }

    @Override
    public void wakeup() {
        if (executor.isExecutorThread(Thread.currentThread())) {
            return;
        }
        DrivenLoop l = loop;
        if (l != null && !failed) {
            wakeRequested = true;
            l.wakeup();
        } else {
            Thread t = thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    @Override
    public IoRegistration register(IoHandle handle) {
        if (!(handle instanceof RdmaIoHandle h)) {
            throw new IllegalArgumentException("not an RDMA channel's handle: " + handle.getClass().getName());
        }
        if (!handles.add(h)) {
            throw new IllegalStateException(h + " is registered already");
        }
        return new Registration(h);
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return RdmaIoHandle.class.isAssignableFrom(handleType);
    }

    @Override
    public void prepareToDestroy() {
        for (RdmaIoHandle h : new ArrayList<>(handles)) {
            try {
                h.close();
            } catch (Exception e) {
                LOG.debug("closing {} at shutdown: {}", h, e.toString());
            }
        }
    }

    @Override
    public void destroy() {
        DrivenLoop l = loop;
        if (l == null) {
            return;
        }
        // Graceful closes started in prepareToDestroy need passes to finish; then the loop aborts what is left.
        long end = System.nanoTime() + DRAIN_NANOS;
        try {
            while (!failed && l.channelCount() > 0 && System.nanoTime() - end < 0) {
                if (turn(l) == 0) {
                    LockSupport.parkNanos(100_000);
                }
            }
        } catch (RdmaException | RuntimeException e) {
            LOG.debug("{}: draining at shutdown: {}", l, e.toString());
        }
        try {
            l.close();
        } catch (RdmaException | RuntimeException e) {
            LOG.warn("{}: closing at shutdown: {}", l, e.toString());
        }
        loop = null;
    }

    /**
     * A channel's registration. Netty hands the channel a wrapper of it, so the channel finds the handler
     * (whose loop it asks for when it needs one) as {@link #attachment()}.
     */
    private final class Registration implements IoRegistration {
        private final RdmaIoHandle handle;
        private final AtomicBoolean cancelled = new AtomicBoolean();

        Registration(RdmaIoHandle handle) {
            this.handle = handle;
        }

        @SuppressWarnings("unchecked")
        @Override
        public <T> T attachment() {
            return (T) RdmaIoHandler.this;
        }

        @Override
        public long submit(IoOps ops) {
            throw new UnsupportedOperationException("RDMA channels have no interest ops");
        }

        @Override
        public boolean isValid() {
            return !cancelled.get();
        }

        @Override
        public boolean cancel() {
            if (!cancelled.compareAndSet(false, true)) {
                return false;
            }
            if (executor.isExecutorThread(Thread.currentThread())) {
                handles.remove(handle);
            } else {
                executor.execute(() -> handles.remove(handle));
            }
            return true;
        }
    }
}
