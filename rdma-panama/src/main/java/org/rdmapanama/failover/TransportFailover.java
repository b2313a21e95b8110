package org.rdmapanama.failover;

import org.rdmapanama.cm.CmEventLoop;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The active side of a connection with an ordered transport preference: a
 * list of {@link TransportRoute}s (for example RoCEv2 to the peer's RoCE
 * address, then iWARP to its iWARP address, from {@link TransportRoute#preferred}).
 * <ul>
 *   <li>{@link #connect} tries the routes in order and returns the first
 *       connection that comes up. Each attempt that fails is reported (to the
 *       listener, and in {@link #history()}) with its route and why: TIMEOUT,
 *       REJECTED, UNREACHABLE, ... With none left it throws a
 *       {@link FailoverException} listing every attempt.</li>
 *   <li>When the service's established connection fails (a completion with
 *       RETRY_EXC_ERR, a DISCONNECTED event, ...), it says so with
 *       {@link #failed}. That is reported; if the policy asks for reconnects
 *       and the failure is a transport error, the broken connection is closed
 *       and the routes after its one are tried, then those before it (the
 *       preferred transport may be back by then).</li>
 * </ul>
 * Before an attempt connects, the device rdma_cm resolved the route's address
 * to must have the route's transport (from the device's attributes, never its
 * name): rdma_cm picks devices by address, so an address on the wrong
 * interface would silently connect on the wrong transport. Such a route is a
 * configuration error and throws {@link IllegalArgumentException}.
 * <p>
 * Nothing here touches the data path: the service polls its own connection
 * as before and calls {@link #failed} only once something failed. One thread
 * at a time connects (the methods block, so never on a {@link CmEventLoop}'s
 * thread); {@link #history()} may be read from any.
 */
public final class TransportFailover {
    /**
     * Prepares a resolved connection before it connects: registers the memory
     * the peer needs, and returns the private data that advertises it. Called
     * again for each connection the failover makes, on the calling thread.
     */
    @FunctionalInterface
    public interface Setup {
        byte[] prepare(RdmaConnection resolved) throws RdmaException;
    }

    /** Connects with no private data and registers nothing. */
    public static final Setup NO_SETUP = c -> new byte[0];

    private final List<TransportRoute> routes;
    private final FailoverPolicy policy;
    private final Consumer<FailoverEvent> listener;
    private final List<FailoverEvent> history = new CopyOnWriteArrayList<>();
    private int attempts; // the connecting thread's
    private volatile int current = -1;
    private volatile long upSince;

    /**
     * @param routes   the routes, most preferred first; a route may not appear twice
     * @param listener told of each event as it happens, on the connecting thread (may be null)
     */
    public TransportFailover(List<TransportRoute> routes, FailoverPolicy policy, Consumer<FailoverEvent> listener) {
        if (routes.isEmpty()) {
            throw new IllegalArgumentException("a failover needs at least one route; the preference is empty");
        }
        if (new HashSet<>(routes).size() != routes.size()) {
            throw new IllegalArgumentException("a route appears twice in " + routes);
        }
        this.routes = List.copyOf(routes);
        this.policy = Objects.requireNonNull(policy, "policy");
        this.listener = listener == null ? e -> { } : listener;
    }

    public List<TransportRoute> routes() {
        return routes;
    }

    public FailoverPolicy policy() {
        return policy;
    }

    /** The route of the connection made last, or null before one came up. */
    public TransportRoute route() {
        int i = current;
        return i < 0 ? null : routes.get(i);
    }

    /** Everything reported so far, in order. */
    public List<FailoverEvent> history() {
        return List.copyOf(history);
    }

    /**
     * Connects on the first route that comes up, in preference order.
     *
     * @throws FailoverException        when every route failed, listing each attempt
     * @throws IllegalArgumentException when a route's address belongs to a device of another transport
     */
    public RdmaConnection connect(Setup setup) throws RdmaException, InterruptedException {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < routes.size(); i++) {
            order.add(i);
        }
        return tryRoutes(order, setup, "no route to the peer could be established");
    }

    /**
     * Reports that {@code broken}, the connection this failover made last,
     * failed with {@code why}. Reconnects when the policy asks for it and
     * {@code why} is a transport error: then {@code broken} is closed (with
     * everything registered on it) and the new connection returned.
     * Otherwise returns null and {@code broken} stays its owner's.
     *
     * @throws FailoverException when a reconnect was due and no other route came up
     */
    public RdmaConnection failed(RdmaConnection broken, TransportFailure why, Setup setup)
            throws RdmaException, InterruptedException {
        int from = current;
        if (from < 0) {
            throw new IllegalStateException("failed() reports a connection this failover made; none was made yet");
        }
        boolean reconnect = policy.reconnect() && why.isTransportError();
        report(new FailoverEvent(FailoverEvent.Kind.CONNECTION_FAILED, Instant.now(), 0, routes.get(from),
                deviceOf(broken), Duration.ofNanos(System.nanoTime() - upSince), why, reconnect));
        if (!reconnect) {
            return null;
        }
        // Closed first: a half-dead QP must not linger beside its successor (and on siw, contexts are scarce).
        Quietly.close(broken);
        List<Integer> order = new ArrayList<>();
        for (int k = 1; k < routes.size(); k++) {
            order.add((from + k) % routes.size());
        }
        return tryRoutes(order, setup, "the connection " + routes.get(from) + " failed (" + why
                + ") and no other route could be established");
    }

    private static String deviceOf(RdmaConnection c) {
        try {
            return c.context().device().name();
        } catch (RuntimeException e) {
            return null; // closed meanwhile: the report goes on without it
        }
    }

    private RdmaConnection tryRoutes(List<Integer> order, Setup setup, String what)
            throws RdmaException, InterruptedException {
        List<FailoverEvent> failures = new ArrayList<>();
        for (int i : order) {
            Outcome o = attempt(i, setup);
            if (o.connection() != null) {
                return o.connection();
            }
            failures.add(o.event());
        }
        throw new FailoverException(what, failures);
    }

    /** What one attempt reported, and its connection if it came up. */
    private record Outcome(FailoverEvent event, RdmaConnection connection) {}

    private Outcome attempt(int i, Setup setup) throws InterruptedException {
        TransportRoute r = routes.get(i);
        int n = ++attempts;
        long t0 = System.nanoTime();
        long deadline = t0 + policy.attemptTimeout().toNanos();
        RdmaConnection c = null;
        String device = null;
        try {
            c = RdmaConnection.resolve(r.remote(), r.local(), policy.options(), policy.attemptTimeout());
            device = c.context().device().name();
            Transport actual = c.context().transport();
            if (actual != r.transport()) {
                TransportFailure wrong = new TransportFailure(TransportFailure.Reason.WRONG_TRANSPORT,
                        r.remote().getAddress().getHostAddress() + " is reached through " + device + " ("
                                + actual.displayName() + ")");
                report(failedAttempt(n, r, device, t0, wrong));
                throw new IllegalArgumentException("route " + (i + 1) + " (" + r + ") does not lead to a "
                        + r.transport().displayName() + " device: " + wrong.detail() + " (rdma_cm picks the device"
                        + " by address: give the peer's address on its " + r.transport().displayName() + " interface)");
            }
            byte[] data = setup.prepare(c);
            c.connect(data, Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime())));
            current = i;
            upSince = System.nanoTime();
            FailoverEvent ok = new FailoverEvent(FailoverEvent.Kind.ESTABLISHED, Instant.now(), n, r, device,
                    Duration.ofNanos(upSince - t0), null, false);
            report(ok);
            RdmaConnection up = c;
            c = null; // the caller's now
            return new Outcome(ok, up);
        } catch (RdmaException e) {
            FailoverEvent failed = failedAttempt(n, r, device, t0, TransportFailure.of(e));
            report(failed);
            return new Outcome(failed, null);
        } finally {
            Quietly.close(c);
        }
    }

    private static FailoverEvent failedAttempt(int n, TransportRoute r, String device, long t0, TransportFailure why) {
        return new FailoverEvent(FailoverEvent.Kind.ATTEMPT_FAILED, Instant.now(), n, r, device,
                Duration.ofNanos(System.nanoTime() - t0), why, false);
    }

    private void report(FailoverEvent e) {
        history.add(e);
        listener.accept(e);
    }
}
