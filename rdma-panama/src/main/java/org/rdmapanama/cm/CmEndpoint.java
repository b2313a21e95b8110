package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * The events of one connection's cm_id, in order: the loop adds them, and
 * each {@link #next} future takes the oldest one not yet taken (waiters are
 * served first come, first served). A waiter that was cancelled or timed out
 * takes nothing. After {@link #end}, waiters fail with its cause.
 */
final class CmEndpoint implements CmEventLoop.Target {
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    private final ArrayDeque<CompletableFuture<CmEvent>> waiters = new ArrayDeque<>();
    private Supplier<? extends Throwable> endedBy; // guarded by this; made into `ended` when a waiter needs it
    private Throwable ended;

    CompletableFuture<CmEvent> next() {
        CompletableFuture<CmEvent> f = new CompletableFuture<>();
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

    /**
     * The next event if it is {@code wanted}, else a {@link CmException} (the
     * event, or a timeout at {@code deadline}) naming {@code what}. Cancelling
     * the result gives up the wait.
     */
    CompletableFuture<CmEvent> expect(CmEventLoop loop, CmEventType wanted, long deadline, String what) {
        CompletableFuture<CmEvent> next = next();
        CmEventLoop.Timer timer = loop.schedule(deadline, () -> next.completeExceptionally(
                CmException.timeout("timed out " + what + " (no " + wanted.cName() + ")")));
        CompletableFuture<CmEvent> result = next.thenApply(ev -> {
            if (ev.type() != wanted) {
                throw new CompletionException(new CmException(what + " failed: " + ev.type().cName()
                        + RdmaConnection.describeStatus(ev), ev.type(), ev.status()));
            }
            return ev;
        });
        result.whenComplete((ev, e) -> {
            timer.cancel();
            next.cancel(false); // a no-op unless the result was cancelled first
        });
        return result;
    }

    @Override
    public void onEvent(CmEvent event) {
        synchronized (this) {
            if (endedBy != null) {
                return;
            }
            events.add(event);
        }
        deliver();
    }

    @Override
    public void onLoopFailure(RdmaException e) {
        end(e);
    }

    /** Fails every waiter, now and later, with {@code cause}; events not taken are dropped. */
    void end(Throwable cause) {
        end(() -> cause);
    }

    /**
     * {@link #end(Throwable)} with the cause made only if a waiter is failed by it: a connection's
     * close ends its endpoint, and an exception (its stack trace) per connection nobody waits on
     * costs set-up rates under emulation.
     */
    void end(Supplier<? extends Throwable> cause) {
        List<CompletableFuture<CmEvent>> failed;
        Throwable why;
        synchronized (this) {
            if (endedBy != null) {
                return;
            }
            endedBy = cause;
            failed = new ArrayList<>(waiters);
            waiters.clear();
            events.clear();
            why = failed.isEmpty() ? null : cause();
        }
        for (CompletableFuture<CmEvent> f : failed) {
            f.completeExceptionally(why);
        }
    }

    private Throwable cause() { // under this
        if (ended == null) {
            ended = endedBy.get();
        }
        return ended;
    }

    /** Pairs waiters with events; completes outside the lock, as completion runs the waiter's stages. */
    private void deliver() {
        while (true) {
            CompletableFuture<CmEvent> w;
            CmEvent ev;
            synchronized (this) {
                waiters.removeIf(CompletableFuture::isDone);
                if (waiters.isEmpty() || events.isEmpty()) {
                    return;
                }
                w = waiters.poll();
                ev = events.poll();
            }
            if (!w.complete(ev)) {
                synchronized (this) {
                    if (endedBy == null) {
                        events.addFirst(ev); // it gave up in between: the event is the next one's
                    }
                }
            }
        }
    }
}
