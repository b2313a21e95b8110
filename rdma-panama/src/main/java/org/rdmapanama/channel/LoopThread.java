package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;

/**
 * What turns a {@link ChannelLoop} on a thread of its own: passes while there
 * is work, a busy-poll for {@link ChannelOptions#busyPollNanos()} once there
 * is none, then a sleep on the completion channel and the wakeup.
 */
final class LoopThread implements Runnable {
    private static final int CLOCK_EVERY = 64;

    private final ChannelLoop loop;
    private final long busyPollNanos;
    private int idlePolls; // empty polls in a row
    private long idleSince; // when they began

    LoopThread(ChannelLoop loop, long busyPollNanos) {
        this.loop = loop;
        this.busyPollNanos = busyPollNanos;
    }

    @Override
    public void run() {
        try {
            loop.attach();
            while (!loop.stopping()) {
                turn();
            }
        } catch (RdmaException e) {
            loop.loopFailed(e);
        } catch (RuntimeException | Error e) {
            loop.loopFailed(new RdmaException(loop.name + " failed: " + e, e));
            throw e;
        } finally {
            loop.closeConfined();
        }
    }

    /**
     * One pass of the loop, a method of its own: the JIT then compiles it whole, as often as its profile
     * changes. As the body of {@link #run()} it was only ever compiled on stack, early, with the data path
     * called out of line and left in profiling code (docs/results/2026-12-07-channel-latency.md).
     */
    private void turn() throws RdmaException {
        if (loop.runOnce() > 0) {
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
        if (loop.armSleep()) {
            loop.sleep(-1);
        }
        idlePolls = 0;
    }
}
