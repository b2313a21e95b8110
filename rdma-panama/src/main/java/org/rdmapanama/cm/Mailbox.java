package org.rdmapanama.cm;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What the event loop hands to the threads that wait for it: a connection's
 * events, a listener's requests. Each {@link #take} future gets the oldest item
 * not yet taken, first come, first served; a waiter that gave up (cancelled,
 * timed out) takes nothing, and its item goes to the next. After {@link #end},
 * waiters fail with its cause.
 * <p>
 * Futures are completed outside the lock: completing one runs the waiter's stages.
 */
final class Mailbox<T> {
    private final ArrayDeque<T> items = new ArrayDeque<>();
    private final ArrayDeque<CompletableFuture<T>> waiters = new ArrayDeque<>();
    /** Gets an item that was taken out for a waiter which gave up just as the mailbox ended. */
    private final Consumer<? super T> orphans;
    private Supplier<? extends Throwable> endedBy; // guarded by this; made into `ended` when a waiter needs it
    private Throwable ended;

    Mailbox(Consumer<? super T> orphans) {
        this.orphans = orphans;
    }

    /** The oldest item nobody has taken; cancelling the future gives up the wait. */
    CompletableFuture<T> take() {
        CompletableFuture<T> f = new CompletableFuture<>();
        synchronized (this) {
            if (endedBy != null) {
                f.completeExceptionally(cause());
                return f;
            }
            waiters.add(f);
        }
        deliver();
        return f;
    }

    /** Queues {@code item} for a waiter; false once ended, when disposing of it is the caller's part. */
    boolean offer(T item) {
        synchronized (this) {
            if (endedBy != null) {
                return false;
            }
            items.add(item);
        }
        deliver();
        return true;
    }

    /**
     * Fails every waiter, now and later, with {@code cause}, made only if a
     * waiter needs it (an exception per connection that nobody waits on costs
     * set-up rates); returns the items nobody took, empty if it had ended already.
     */
    List<T> end(Supplier<? extends Throwable> cause) {
        List<CompletableFuture<T>> failed;
        List<T> left;
        Throwable why;
        synchronized (this) {
            if (endedBy != null) {
                return List.of();
            }
            endedBy = cause;
            failed = new ArrayList<>(waiters);
            waiters.clear();
            left = new ArrayList<>(items);
            items.clear();
            why = failed.isEmpty() ? null : cause();
        }
        for (CompletableFuture<T> f : failed) {
            f.completeExceptionally(why);
        }
        return left;
    }

    synchronized boolean isEnded() {
        return endedBy != null;
    }

    private Throwable cause() { // under this
        if (ended == null) {
            ended = endedBy.get();
        }
        return ended;
    }

    private void deliver() {
        while (true) {
            CompletableFuture<T> w;
            T item;
            synchronized (this) {
                waiters.removeIf(CompletableFuture::isDone);
                if (waiters.isEmpty() || items.isEmpty()) {
                    return;
                }
                w = waiters.poll();
                item = items.poll();
            }
            if (!w.complete(item)) {
                boolean orphaned;
                synchronized (this) {
                    orphaned = endedBy != null;
                    if (!orphaned) {
                        items.addFirst(item); // it gave up in between: the item is the next one's
                    }
                }
                if (orphaned) {
                    orphans.accept(item);
                }
            }
        }
    }
}
