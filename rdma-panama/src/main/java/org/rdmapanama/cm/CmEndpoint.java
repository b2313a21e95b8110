package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The events of one connection's cm_id, in order: the loop adds them, and
 * each {@link #next} future takes the oldest one not yet taken (see {@link Mailbox}).
 */
final class CmEndpoint implements CmEventLoop.Target {
    private volatile Consumer<CmEvent> watcher = ev -> { };
    private final Mailbox<CmEvent> events = new Mailbox<>(ev -> { }); // an event nobody waits for any more is dropped

    CompletableFuture<CmEvent> next() {
        return events.take();
    }

    /** The next event, waiting up to {@code timeout}; null if none came. */
    CmEvent nextWithin(Duration timeout) throws RdmaException, InterruptedException {
        CompletableFuture<CmEvent> f = next();
        try {
            return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return f.cancel(false) ? null : f.join(); // or it came in between
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        } catch (ExecutionException e) {
            throw CmFutures.rethrow(e.getCause());
        }
    }

    /** Sees every event first, on the loop thread, whether or not anybody waits for it. */
    void watch(Consumer<CmEvent> watcher) {
        this.watcher = watcher;
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
                        + CmStatus.describe(ev), ev.type(), ev.status()));
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
        watcher.accept(event);
        events.offer(event);
    }

    @Override
    public void onLoopFailure(RdmaException e) {
        end(e);
    }

    /** Fails every waiter, now and later, with {@code cause}; events not taken are dropped. */
    void end(Throwable cause) {
        end(() -> cause);
    }

    /** {@link #end(Throwable)} with the cause made only if a waiter is failed by it. */
    void end(Supplier<? extends Throwable> cause) {
        events.end(cause);
    }
}
