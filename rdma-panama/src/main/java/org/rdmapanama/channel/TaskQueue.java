package org.rdmapanama.channel;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Many producers, one consumer (the loop thread), intrusive: the node is the
 * task, so a push allocates nothing and takes no lock (Vyukov's queue). A
 * task is in at most one queue at a time.
 */
final class TaskQueue {
    private final LoopTask stub = new LoopTask() {};
    private final AtomicReference<LoopTask> tail = new AtomicReference<>(stub);
    private LoopTask head = stub; // consumer only

    void push(LoopTask t) {
        t.handoffNext = null;
        LoopTask prev = tail.getAndSet(t);
        prev.handoffNext = t;
    }

    /** The oldest task, or null when none is (completely) pushed yet. */
    LoopTask poll() {
        LoopTask h = head;
        LoopTask next = h.handoffNext;
        if (h == stub) {
            if (next == null) {
                return null;
            }
            head = next;
            h = next;
            next = next.handoffNext;
        }
        if (next != null) {
            head = next;
            return h;
        }
        if (h != tail.get()) {
            return null; // a producer swapped the tail but has not linked yet: next time
        }
        push(stub);
        next = h.handoffNext;
        if (next != null) {
            head = next;
            return h;
        }
        return null;
    }

    /** Whether nothing was pushed since the last poll emptied the queue (a push under way counts as something). */
    boolean isEmpty() {
        return head == stub && stub.handoffNext == null && tail.get() == stub;
    }
}
