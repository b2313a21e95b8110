package org.rdmapanama.channel;

/**
 * A loop's keepalive clock, on its thread: once an interval, each channel
 * that posted nothing since the last one is told to send a CREDIT
 * ({@link SendSide#keepaliveTick}).
 */
final class Keepalive {
    private final long intervalNanos;
    private final ChannelTable table;
    private long next;
    private int passes;

    Keepalive(long intervalNanos, ChannelTable table) {
        this.intervalNanos = intervalNanos;
        this.table = table;
        this.next = System.nanoTime() + intervalNanos;
    }

    /** After a pass of the loop; true when channels were told (they are dirty). */
    boolean pass() {
        // The clock is read once in 1,024 passes: under emulation it costs as much as a poll.
        return (++passes & 1023) == 0 && tick(System.nanoTime());
    }

    long nanosToNext() {
        return Math.max(0, next - System.nanoTime());
    }

    boolean tick(long now) {
        if (now - next < 0) {
            return false;
        }
        next = now + intervalNanos;
        for (int id = 0, n = table.idLimit(); id < n; id++) {
            MessageChannel ch = table.at(id);
            if (ch != null) {
                ch.sender.keepaliveTick();
            }
        }
        return true;
    }
}
