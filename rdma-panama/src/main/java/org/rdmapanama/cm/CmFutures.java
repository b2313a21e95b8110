package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** How a blocking call waits for a future of the event loop, and the deadlines it hands to librdmacm. */
final class CmFutures {
    /** A wait on the loop's future lasts this much past its own timeout only if the loop is wedged. */
    static final long GRACE_NANOS = 5_000_000_000L;

    private CmFutures() {}

    /**
     * Waits for a future of the loop, which completes by {@code deadline} by
     * itself (its own timer); throws what it failed with. Interrupted: cancels it.
     */
    static <T> T await(CompletableFuture<T> f, long deadline, String wedged)
            throws RdmaException, InterruptedException {
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()) + GRACE_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        } catch (TimeoutException e) {
            f.cancel(false);
            throw CmException.timeout(wedged + ": the rdma_cm event loop did not answer");
        } catch (java.util.concurrent.ExecutionException e) {
            throw rethrow(e.getCause());
        } catch (java.util.concurrent.CancellationException e) {
            throw new CmException(wedged + ": cancelled", null, 0);
        }
    }

    /** Throws an unchecked failure as it is; returns a checked one for the caller to throw. */
    static RdmaException rethrow(Throwable t) {
        t = RdmaException.unwrap(t);
        if (t instanceof RdmaException r) {
            return r;
        }
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error r) {
            throw r;
        }
        throw new IllegalStateException(t);
    }

    /** What is left until {@code deadline}, in the whole milliseconds librdmacm takes (at least 1). */
    static int millis(long deadline) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (deadline - System.nanoTime()) / 1_000_000));
    }

}
