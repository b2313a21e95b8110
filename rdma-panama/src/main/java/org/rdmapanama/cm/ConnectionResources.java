package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.QpAttributes;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;
import org.rdmapanama.verbs.QueuePairType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A connection's verbs objects on its cm_id's device: the context librdmacm
 * opened (borrowed), a PD, a CQ and the QP rdma_create_qp makes, or with
 * {@link SharedResources} only the QP; and their teardown, which frees what
 * it owns and then the cm_id, and which a close may have to retry while a
 * call on another thread still uses one of them.
 */
final class ConnectionResources {
    final DeviceContext context;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    private final CmId id;
    /** Set when the context, PD and CQ are the caller's: teardown then frees only the QP. */
    private final boolean shared;
    /** Set while the verbs objects or the cm_id are still to be freed. */
    private volatile boolean teardownPending;
    /** Not the connection's monitor: a close may wait seconds for a call, and event handling must not. */
    private final Object teardownLock = new Object();

    ConnectionResources(CmId id, ConnectionOptions options, String peer) throws RdmaException {
        this.id = id;
        this.shared = false;
        DeviceContext ctx = null;
        try {
            ctx = id.withVerbs(v -> verbs().borrowContext(v));
            this.context = ctx;
            this.pd = ctx.allocateProtectionDomain();
            this.cq = ctx.createCompletionQueue(options.cqSize());
            this.qp = createQp(QueuePairConfig.rc(cq).withCaps(options.caps()),
                    "connection with " + peer + " on " + ctx.device().name());
        } catch (Throwable t) {
            if (ctx != null) {
                try {
                    ctx.close();
                } catch (RdmaException | RuntimeException alsoFailed) {
                    t.addSuppressed(alsoFailed);
                }
            }
            throw t;
        }
    }

    /**
     * Only the QP, made with {@code with}'s PD, CQs and SRQ; refused, freeing
     * nothing, if rdma_cm put the cm_id on another device than theirs.
     */
    ConnectionResources(CmId id, ConnectionOptions options, String peer, SharedResources with) throws RdmaException {
        this.id = id;
        this.shared = true;
        this.context = with.context();
        this.pd = with.pd();
        this.cq = with.sendCq();
        MemorySegment mine = CmContexts.handleOf(context);
        String landed = id.withVerbs(v -> v.equals(mine) ? null
                : v.equals(MemorySegment.NULL) ? "no device" : Verbs.deviceName(MemorySegment.ofAddress(VerbsObjects.deviceOf(v))));
        if (landed != null) {
            throw new RdmaException("the connection with " + peer + " is on " + landed + " (rdma_cm picks the device"
                    + " by address), but its shared resources are on " + context.device().name()
                    + (mine == null ? " (whose context is closed)" : ""));
        }
        this.qp = createQp(new QueuePairConfig(QueuePairType.RC, with.sendCq(), with.recvCq(), with.srq(), options.caps()),
                "connection with " + peer + " on " + context.device().name());
    }

    /** The verbs objects' package-private parts, through {@link Bridge}. */
    private static Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> verbs() {
        return Bridge.verbs();
    }

    private QueuePair createQp(QueuePairConfig config, String what) throws RdmaException {
        Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> verbs = verbs();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateInit(a);
            verbs.fillQpInitAttr(attr, pd, config);
            return verbs.createQueuePair(pd, config, attr, pdHandle -> id.createQp(pdHandle, attr, what),
                    q -> id.destroyQp());
        }
    }

    boolean teardownPending() {
        return teardownPending;
    }

    /** Frees QP, CQ, PD (the context's close does, newest first), or only the QP if shared, then the cm_id. */
    void teardown() throws RdmaException {
        teardownPending = true;
        retryTeardown();
    }

    /**
     * {@link #teardown} on the rdma_cm loop thread, waited for: while it handles a connect's response or a
     * reject, rdma_get_cm_event uses {@code id->qp} (ibv_set_ece, the moves to RTR, RTS or ERR), and an
     * rdma_destroy_qp on another thread frees the QP under it (the JVM crashed so in the lab when a connect
     * was cancelled). After {@link #LOOP_PATIENCE_SECONDS} this thread does it: the loop may be closed or
     * stuck, and the teardown runs once whichever thread comes first. With no loop, here.
     */
    void teardownOnLoop(CmEventLoop loop) throws RdmaException {
        teardownPending = true;
        if (loop != null && !loop.onLoopThread()) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            try {
                loop.execute(() -> {
                    try {
                        retryTeardown();
                        done.complete(null);
                    } catch (Throwable t) {
                        done.completeExceptionally(t);
                    }
                });
                done.get(LOOP_PATIENCE_SECONDS, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RdmaException r) {
                    throw r;
                }
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            } catch (IllegalStateException | TimeoutException e) {
                // the loop is closed (no events come any more) or busy: here, then
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        retryTeardown();
    }

    static final int LOOP_PATIENCE_SECONDS = 2;

    /**
     * Finishes a teardown that could not complete: ResourceBusyException and
     * ResourceInUseException propagate and leave it pending, the context still
     * open, so its cm_id is kept as well.
     */
    void retryTeardown() throws RdmaException {
        synchronized (teardownLock) {
            if (!teardownPending) {
                return;
            }
            RdmaException first = null;
            try {
                if (shared) {
                    qp.close();
                } else {
                    context.close();
                }
            } catch (RdmaException e) {
                first = e; // the C side failed: the Java side is closed anyway
            }
            try {
                id.close();
            } catch (RdmaException e) {
                first = first == null ? e : first;
            } catch (RuntimeException e) {
                if (first != null) {
                    e.addSuppressed(first); // the context's failure is reported with it, not lost
                }
                throw e;
            }
            teardownPending = false;
            if (first != null) {
                throw first;
            }
        }
    }
}
