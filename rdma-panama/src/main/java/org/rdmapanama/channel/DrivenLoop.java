package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;

import java.util.concurrent.locks.LockSupport;

/**
 * A channel loop without a thread of its own, for a framework whose event loop
 * already owns one (Netty's {@code IoHandler}): the thread that calls
 * {@link #attach()} turns it with {@link #runOnce()}, and when it has nothing
 * to do, {@link #armSleep()} then {@link #sleep(long)}. Channels put on it with
 * {@link ChannelGroup#connect(java.net.InetSocketAddress, MessageHandler, DrivenLoop)}
 * or {@link ChannelRequest#accept} run their handlers on that thread.
 * Everything but {@link #wakeup()}, {@link #inLoop()} and {@link #channelCount()}
 * is for that thread only.
 */
public final class DrivenLoop implements AutoCloseable {
    final ChannelLoop loop;
    private final ChannelGroup group;

    DrivenLoop(ChannelGroup group, ChannelLoop loop) {
        this.group = group;
        this.loop = loop;
    }

    /** The calling thread becomes the loop's; before any other call but {@link #wakeup()}. */
    public void attach() throws RdmaException {
        loop.attach();
    }

    /**
     * One pass that does not wait: tasks other threads handed over, a batch of completions (their handlers
     * run here), the posts they led to. Returns the work done, 0 when there was none.
     *
     * @throws RdmaException when the completion queue broke: every channel of the loop has failed then,
     *                       and later passes do nothing
     */
    public int runOnce() throws RdmaException {
        return loop.runOnce();
    }

    /**
     * Arms the completion queue before a sleep; false when work came in meanwhile (it is done, do not
     * sleep). After true, {@link #sleep} or, if the driver found work of its own, {@link #disarm}.
     */
    public boolean armSleep() throws RdmaException {
        try {
            return loop.armSleep();
        } catch (RdmaException e) {
            throw failed(e);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /** Sleeps until a completion, a {@link #wakeup()} or {@code timeoutNanos} (negative: no limit). */
    public void sleep(long timeoutNanos) throws RdmaException {
        try {
            loop.sleep(timeoutNanos);
        } catch (RdmaException e) {
            throw failed(e);
        } catch (RuntimeException e) {
            throw failed(e);
        }
    }

    /** As a failed pass: the loop's channels fail with it (as its own thread's loop does), not stay open idle. */
    private <E extends Exception> E failed(E e) {
        loop.loopFailed(e instanceof RdmaException r ? r : new RdmaException(loop.name + " failed: " + e, e));
        return e;
    }

    public void disarm() {
        loop.disarm();
    }

    /** From any thread: ends a {@link #sleep} (a no-op unless the loop is armed). */
    public void wakeup() {
        loop.wakeup();
    }

    public boolean inLoop() {
        return loop.inLoop();
    }

    /** Channels on this loop, open or closing. */
    public int channelCount() {
        return loop.channels();
    }

    /** How long to busy-poll before sleeping, from the group's {@link ChannelOptions#busyPollNanos()}. */
    public long busyPollNanos() {
        return group.options().busyPollNanos();
    }

    /**
     * On the loop's thread: its channels close abortively and get up to 5 s to finish (their flushed
     * completions coming in), then its completion queue, channel and wakeup go. Before the group closes.
     * A loop that no thread attached to may be closed from any thread.
     */
    @Override
    public void close() throws RdmaException {
        if (loop.closed()) {
            return;
        }
        if (!loop.inLoop()) {
            loop.close(); // refuses unless no thread attached
            group.drivenClosed(this);
            return;
        }
        loop.stop();
        loop.failAll(new org.rdmapanama.error.ClosedResourceException(loop.name + " was closed"));
        long end = System.nanoTime() + 5_000_000_000L;
        while (loop.channels() > 0 && !loop.failed() && System.nanoTime() - end < 0) {
            if (loop.runOnce() == 0) {
                LockSupport.parkNanos(100_000);
            }
        }
        int left = loop.channels();
        loop.closeConfined();
        try {
            loop.freeResources();
        } finally {
            group.drivenClosed(this);
        }
        if (left > 0) {
            throw new RdmaException(loop.name + (loop.failed() ? " failed, and " + left + " of its channels with it"
                    : ": " + left + " channels did not finish within 5 s"));
        }
    }

    @Override
    public String toString() {
        return loop.name;
    }

    ChannelGroup group() {
        return group;
    }
}
