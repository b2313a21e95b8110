package org.rdmapanama.channel;

import java.util.ArrayList;
import java.util.List;

/** The closes a loop watches (graceful closes that must end by a deadline), on its thread. */
final class Deadlines {
    private final List<Closing> watched = new ArrayList<>();

    void watch(Closing c) {
        if (!watched.contains(c)) {
            watched.add(c);
        }
    }

    boolean isEmpty() {
        return watched.isEmpty();
    }

    /** Tells each close whose deadline passed; forgets those no longer watching. */
    void check() {
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

    /** Nanoseconds until the nearest deadline (0 if passed); only when not empty. */
    long nanosToNearest() {
        long d = watched.get(0).deadline();
        for (Closing c : watched) {
            if (c.deadline() - d < 0) {
                d = c.deadline();
            }
        }
        return Math.max(0, d - System.nanoTime());
    }
}
