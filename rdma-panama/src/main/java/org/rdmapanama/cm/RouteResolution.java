package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.internal.Cm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** The active side's first step: a new cm_id, its address and then its route resolved, on the loop's thread. */
final class RouteResolution {
    private RouteResolution() {}

    /**
     * Resolves address and route; the future hands over the cm_id (its events
     * going to {@code events}) or fails, having freed it. Cancelling it ends
     * the step that waits.
     */
    static CompletableFuture<CmId> start(CmEventLoop loop, CmEndpoint events, InetSocketAddress remote,
                                         InetSocketAddress local, long deadline) throws RdmaException {
        CmId id = CmId.create(loop.channel(), "rdma_cm_id to " + remote);
        boolean ok = false;
        try {
            loop.register(id.key(), events);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment src = local == null ? MemorySegment.NULL : CmId.sockaddr(a, local);
                MemorySegment dst = CmId.sockaddr(a, remote);
                id.status(Cm.RESOLVE_ADDR, remote.toString(), src, dst, CmFutures.millis(deadline));
            }
            ok = true;
        } finally {
            if (!ok) {
                loop.unregister(id.key());
                Cleanup.closeQuietly(id);
            }
        }
        CompletableFuture<CmId> routed = new CompletableFuture<>();
        // Each step runs where the previous event was delivered, the loop thread; the cm_id
        // is freed only at the end of the chain, never while a step may still use it.
        events.expect(loop, CmEventType.ADDR_RESOLVED, deadline, "resolving the address " + remote)
                .thenCompose(ev -> {
                    try {
                        id.status(Cm.RESOLVE_ROUTE, remote.toString(), CmFutures.millis(deadline));
                    } catch (RdmaException e) {
                        throw new CompletionException(e);
                    }
                    return events.expect(loop, CmEventType.ROUTE_RESOLVED, deadline, "resolving the route to " + remote);
                })
                .whenComplete((ev, e) -> {
                    if (e != null || !routed.complete(id)) {
                        events.end(e != null ? RdmaException.unwrap(e) : new CancellationException());
                        loop.unregister(id.key());
                        Cleanup.closeQuietly(id);
                        routed.completeExceptionally(e == null ? new CancellationException() : RdmaException.unwrap(e));
                    }
                });
        routed.whenComplete((i, e) -> {
            if (routed.isCancelled()) {
                events.end(new CancellationException("resolving " + remote + " was cancelled"));
            }
        });
        return routed;
    }

}
