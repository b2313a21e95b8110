package org.rdmapanama.verbs;

import org.rdmapanama.error.CompletionQueueOverrunException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.DataPath;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;

import java.lang.foreign.MemorySegment;

/**
 * {@code struct ibv_cq}. {@link #poll} is the data path: one call through
 * {@code context->ops.poll_cq} into a caller-owned {@link CompletionBatch},
 * no allocation. Closing is refused while a queue pair still uses the CQ.
 * <p>
 * A CQ holds {@link #size()} completions. Queue pairs are refused a depth
 * their CQ cannot hold; beyond that, polling often enough is the caller's
 * part. If the provider still has to drop a completion it reports a CQ
 * error, and every later {@link #poll} throws
 * {@link CompletionQueueOverrunException}: loss is never silent.
 */
public final class CompletionQueue extends NativeResource implements CompletionSource {
    private final DeviceContext context;
    private final CompletionChannel channel;
    private final MemorySegment pollFn;
    private final MemorySegment notifyFn;
    private final int size;
    private final Dependent asUser; // this CQ, as a user of its channel
    private volatile boolean overrun; // set by the context's AsyncEventWatcher

    private CompletionQueue(DeviceContext context, Native cq, CompletionChannel channel, Dependent asUser) {
        super("CompletionQueue on " + context.device().name(), cq, context);
        this.context = context;
        this.channel = channel;
        this.asUser = asUser;
        this.pollFn = context.pollCqFn;
        this.notifyFn = context.reqNotifyCqFn;
        this.size = VerbsObjects.cqEntries(handle());
        asUser.name(description());
    }

    static CompletionQueue create(DeviceContext context, int entries, CompletionChannel channel)
            throws RdmaException {
        // Hold the channel before the CQ exists, so it cannot close between the two.
        Dependent asUser = new Dependent("a CompletionQueue being created on " + context.device().name());
        if (channel != null) {
            channel.addUser(asUser);
        }
        boolean ok = false;
        try {
            MemorySegment ch = channel == null ? MemorySegment.NULL : channel.channel();
            String what = context.device().name() + ", " + entries + " entries";
            CompletionQueue cq = context.ownChild(ctx -> Verbs.Calls.CREATE_CQ.pointer(what, ctx, entries,
                    MemorySegment.NULL, ch, 0), VerbsObjects.CQ_SIZE, raw -> Verbs.Calls.DESTROY_CQ.status(what, raw),
                    n -> new CompletionQueue(context, n, channel, asUser), false);
            ok = true;
            return cq;
        } finally {
            if (!ok && channel != null) {
                channel.removeUser(asUser);
            }
        }
    }

    @Override
    void opened() {
        context.events().watch(this);
        if (channel != null) {
            channel.attach(this);
        }
    }

    /**
     * A completion batch whose memory belongs to this CQ (freed when it
     * closes). Polling this CQ into it is cheaper than into a standalone
     * batch: one arena acquire per call instead of two.
     */
    public CompletionBatch newBatch(int capacity) {
        checkOpen();
        return new CompletionBatch(capacity, arena(), this);
    }

    /**
     * A poller for this thread alone, without the per-call atomic acquire of
     * {@link #poll}. While it is open this CQ refuses to close; close it on
     * this thread first. See {@link ConfinedPoller}.
     */
    public ConfinedPoller confinedPoller() {
        checkOpen();
        return new ConfinedPoller(this, pollFn);
    }

    /** The number of entries the provider actually gave (at least what was asked). */
    public int size() {
        return size;
    }

    public DeviceContext context() {
        return context;
    }

    long address() {
        return handle().address();
    }

    MemorySegment cq() {
        return handle();
    }

    /**
     * {@code ibv_poll_cq}: moves up to {@code batch.capacity()} completions into
     * {@code batch} and returns how many (0 when there are none). For event mode
     * use {@link #requestNotification} and {@link CompletionChannel#await}.
     */
    @Override
    public int poll(CompletionBatch batch) throws RdmaException {
        if (overrun) {
            batch.filled(0);
            throw overrunError();
        }
        int n;
        try {
            n = DataPath.pollCq(pollFn, handle(), batch.capacity(), batch.segmentFor(this));
        } catch (IllegalStateException e) {
            throw translate(e);
        }
        if (n < 0) {
            batch.filled(0);
            throw Errno.failure("ibv_poll_cq", description(), n);
        }
        batch.filled(n);
        return n;
    }

    /** Whether the provider reported that this CQ overflowed and dropped completions. */
    public boolean hasOverrun() {
        return overrun;
    }

    void overran() {
        overrun = true;
    }

    CompletionQueueOverrunException overrunError() {
        return new CompletionQueueOverrunException(description() + " (" + size + " entries) overran: the device "
                + "reported IBV_EVENT_CQ_ERR and dropped completions. Poll it more often or make it larger; "
                + "close it and its queue pairs to recover");
    }

    /**
     * {@code ibv_req_notify_cq}: arms the CQ so that the next completion (or
     * the next solicited one) signals its {@link CompletionChannel}.
     */
    public void requestNotification(boolean solicitedOnly) throws RdmaException {
        if (channel == null) {
            throw new IllegalStateException(description() + " has no completion channel to notify");
        }
        int rc;
        try {
            rc = DataPath.reqNotifyCq(notifyFn, handle(), solicitedOnly);
        } catch (IllegalStateException e) {
            throw translate(e);
        }
        if (rc != 0) {
            throw Errno.failure("ibv_req_notify_cq", description(), rc);
        }
    }


    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        context.events().unwatch(this);
        Verbs.Calls.DESTROY_CQ.status(description(), raw);
    }

    @Override
    void released() {
        if (channel != null) {
            channel.detach(this);
            channel.removeUser(asUser);
        }
    }
}
