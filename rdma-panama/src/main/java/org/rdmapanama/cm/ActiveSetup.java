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
                                  Duration timeout, SharedResources shared) throws RdmaException, InterruptedException {
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
        return build(loop, events, id, options, remote, shared); // here, not on the loop thread: callers make QPs in parallel
    }

    static CompletableFuture<RdmaConnection> resolveAsync(InetSocketAddress remote, InetSocketAddress local,
                                                          ConnectionOptions options, Duration timeout, CmEventLoop loop,
                                                          SharedResources shared) {
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
                c = build(loop, events, id, options, remote, shared);
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

    /** Resolves, then connects with {@code privateData} within {@code timeout}; a failed connect closes the connection. */
    static CompletableFuture<RdmaConnection> connectAsync(InetSocketAddress remote, InetSocketAddress local,
                                                          ConnectionOptions options, byte[] privateData,
                                                          Duration timeout, CmEventLoop loop, SharedResources shared) {
        long deadline = System.nanoTime() + timeout.toNanos();
        return resolveAsync(remote, local, options, timeout, loop, shared).thenCompose(c -> {
            CompletableFuture<RdmaConnection> f;
            try {
                f = c.connectAsync(privateData, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            return f.whenComplete((ok, e) -> {
                if (e != null) {
                    Cleanup.closeQuietly(c);
                }
            });
        });
    }

    /** The connection on a resolved cm_id: its QP (and PD and CQ unless shared); on failure, frees the cm_id. */
    private static RdmaConnection build(CmEventLoop loop, CmEndpoint events, CmId id, ConnectionOptions options,
                                        InetSocketAddress remote, SharedResources shared) throws RdmaException {
        boolean ok = false;
        try {
            RdmaConnection c = new RdmaConnection(loop, events, id, options, remote.toString(), RdmaConnection.State.RESOLVED,
                    shared);
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
