package org.rdmapanama.testkit;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one source of listening ports for the device tests of a JVM: each call
 * gives a port no other test of the run has used, so that a listener one test
 * left behind (or a connection still closing) never meets the next test.
 * Native tools keep their own default ports, which lie below this range.
 */
public final class LabPorts {
    static final int FIRST = 21100, LAST = 29999;
    private static final AtomicInteger NEXT = new AtomicInteger(FIRST);

    private LabPorts() {}

    public static int next() {
        int port = NEXT.getAndIncrement();
        if (port > LAST) {
            throw new IllegalStateException("the device tests used up ports " + FIRST + ".." + LAST);
        }
        return port;
    }
}
