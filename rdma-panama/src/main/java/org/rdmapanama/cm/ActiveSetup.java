package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cleanup;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** The active side's set-up behind {@link RdmaConnection#resolve} and {@link RdmaConnection#resolveAsync}. */
final class ActiveSetup {
    private ActiveSetup() {}

    static RdmaConnection resolve(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                  Duration timeout) throws RdmaException, InterruptedException {
        CmEventLoop loop = CmEventLoop.shared(); // first use loads and links librdmacm: not part of the budget
        loop.refuseBlockingOnLoop("resolve");
        long deadline = System.nanoTime() + timeout.toNanos();
        CmEndpoint events = new CmEndpoint();
        CompletableFuture<CmId> routed = RouteResolution.start(loop, events, remote, local, deadline);
        CmId id;
        try {
            id = CmFutures.await(routed, deadline, "timed out resolving " + remote);
        } catch (InterruptedException | RdmaException e) {
            if (routed.state() == java.util.concurrent.Future.State.SUCCESS) { // resolved just as we gave up
                events.end(e);
                loop.unregister(routed.join().key());
                Cleanup.closeQuietly(routed.join());
            }
            throw e;
        }
        return build(loop, events, id, options, remote); // here, not on the loop thread: callers make QPs in parallel
    }

    static CompletableFuture<RdmaConnection> resolveAsync(InetSocketAddress remote, InetSocketAddress local,
                                                          ConnectionOptions options, Duration timeout, CmEventLoop loop) {
        CompletableFuture<CmId> routed;
        CmEndpoint events = new CmEndpoint();
        try {
            routed = RouteResolution.start(loop, events, remote, local, System.nanoTime() + timeout.toNanos());
        } catch (RdmaException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<RdmaConnection> result = new CompletableFuture<>();
        routed.whenComplete((id, e) -> {
            if (e != null) {
                result.completeExceptionally(RdmaException.unwrap(e));
                return;
            }
            RdmaConnection c;
            try {
                c = build(loop, events, id, options, remote);
            } catch (RdmaException | RuntimeException x) {
                result.completeExceptionally(x);
                return;
            }
            if (!result.complete(c)) {
                Cleanup.closeQuietly(c); // cancelled meanwhile
            }
        });
        result.whenComplete((c, e) -> {
            if (result.isCancelled()) {
                routed.cancel(false);
            }
        });
        return result;
    }

    /** The connection on a resolved cm_id: PD, CQ and QP; on failure, frees the cm_id. */
    private static RdmaConnection build(CmEventLoop loop, CmEndpoint events, CmId id, ConnectionOptions options,
                                        InetSocketAddress remote) throws RdmaException {
        boolean ok = false;
        try {
            RdmaConnection c = new RdmaConnection(loop, events, id, options, remote.toString(), RdmaConnection.State.RESOLVED);
            ok = true;
            return c;
        } finally {
            if (!ok) {
                events.end(new CmException("setting up the connection to " + remote + " failed", null, 0));
                loop.unregister(id.key());
                Cleanup.closeQuietly(id);
            }
        }
    }
}
