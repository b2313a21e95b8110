package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;

import java.time.Duration;

/**
 * What completions are polled from: a {@link CompletionQueue} itself (any
 * thread) or its {@link ConfinedPoller} (one thread, no arena acquire). Code
 * that only polls can take either.
 */
public interface CompletionSource {
    /**
     * {@code ibv_poll_cq}: moves up to {@code batch.capacity()} completions into
     * {@code batch} and returns how many (0 when there are none).
     */
    int poll(CompletionBatch batch) throws RdmaException;

    /**
     * Polls until at least one completion arrives or {@code timeout} passes,
     * spinning; returns the count (0 on timeout).
     */
    default int pollUntil(CompletionBatch batch, Duration timeout) throws RdmaException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int n;
        while ((n = poll(batch)) == 0) {
            if (System.nanoTime() - deadline > 0) {
                return 0;
            }
            Thread.onSpinWait();
        }
        return n;
    }
}
