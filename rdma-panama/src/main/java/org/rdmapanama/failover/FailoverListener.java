package org.rdmapanama.failover;

import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The passive side of {@link TransportFailover}: one {@link RdmaListener} per
 * transport, each on an address of a device of that transport (checked from
 * the bound device's attributes), and {@link #accept} hands over the next
 * connect request from any of them. A client that fails over from RoCE to
 * iWARP simply shows up on the iWARP listener; which transport a request came
 * on is {@code connection.context().transport()}.
 * <p>
 * Each listener keeps one asynchronous accept armed on its event loop, so
 * requests are taken (and their QPs made) as they arrive and wait in one
 * queue. Closing stops the listeners and closes the connections not taken.
 */
public final class FailoverListener implements AutoCloseable {
    private static final Duration ARMED = Duration.ofHours(1); // re-armed when it ends empty

    private final List<RdmaListener> listeners;
    /** RdmaConnection, or the RdmaException that ended a listener (DEVICE_REMOVAL). */
    private final LinkedBlockingQueue<Object> ready = new LinkedBlockingQueue<>();
    private volatile boolean closed;

    private FailoverListener(List<RdmaListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    /**
     * Listens on each address, in the map's order.
     *
     * @throws IllegalArgumentException when {@code addresses} is empty, an address is a wildcard (it would
     *                                  listen on every device), or belongs to a device of another transport
     */
    public static FailoverListener bind(Map<Transport, InetSocketAddress> addresses, int backlog,
                                        ConnectionOptions options) throws RdmaException {
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("a failover listener needs an address for at least one transport");
        }
        List<RdmaListener> bound = new ArrayList<>();
        boolean ok = false;
        try {
            for (Map.Entry<Transport, InetSocketAddress> e : addresses.entrySet()) {
                RdmaListener l = RdmaListener.bind(e.getValue(), backlog, options);
                bound.add(l);
                check(e.getKey(), l);
            }
            FailoverListener f = new FailoverListener(bound);
            for (RdmaListener l : bound) {
                f.arm(l);
            }
            ok = true;
            return f;
        } finally {
            if (!ok) {
                bound.forEach(Quietly::close);
            }
        }
    }

    private static void check(Transport t, RdmaListener l) throws RdmaException {
        Optional<RdmaDevice> d = l.device();
        if (d.isEmpty()) {
            throw new IllegalArgumentException(l.address() + " is a wildcard address, which listens on every device;"
                    + " give the address of a " + t.displayName() + " device's interface");
        }
        if (d.get().transport() != t) {
            throw new IllegalArgumentException("cannot listen for " + t.displayName() + " on "
                    + l.address().getAddress().getHostAddress() + ": it belongs to " + d.get().name() + " ("
                    + d.get().transport().displayName() + ")");
        }
    }

    /** Keeps one accept waiting on {@code l}; each request it takes joins the queue and re-arms it. */
    private void arm(RdmaListener l) {
        l.acceptAsync(ARMED).whenComplete((c, e) -> { // on the loop thread: queue, never block
            if (e != null) {
                if (!(RdmaException.unwrap(e) instanceof ClosedResourceException)) {
                    hand(RdmaException.unwrap(e));
                }
                return; // this listener is done
            }
            if (c != null) {
                hand(c);
            }
            if (!closed) {
                arm(l);
            }
        });
    }

    private void hand(Object item) {
        ready.add(item);
        if (closed) {
            drain(); // close() may have drained already
        }
    }

    public List<RdmaListener> listeners() {
        return listeners;
    }

    /**
     * The next connect request from any transport, as a connection with its
     * QP, not yet accepted (see {@link RdmaListener#accept}); null after
     * {@code timeout}.
     *
     * @throws RdmaException a listener's device was removed
     */
    public RdmaConnection accept(Duration timeout) throws RdmaException, InterruptedException {
        if (closed) {
            throw new ClosedResourceException("the failover listener on " + addresses() + " is closed");
        }
        Object item = ready.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (item instanceof RdmaException e) {
            throw e;
        }
        if (item instanceof Throwable t) {
            throw new IllegalStateException("a listener of " + addresses() + " failed", t);
        }
        return (RdmaConnection) item;
    }

    private List<InetSocketAddress> addresses() {
        return listeners.stream().map(RdmaListener::address).toList();
    }

    private void drain() {
        Object item;
        while ((item = ready.poll()) != null) {
            if (item instanceof RdmaConnection c) {
                Quietly.close(c); // never accepted: the peer sees a reject
            }
        }
    }

    /** Stops listening; requests not taken are refused. Idempotent. */
    @Override
    public void close() throws RdmaException {
        closed = true;
        RdmaException first = null;
        for (RdmaListener l : listeners) {
            try {
                l.close();
            } catch (RdmaException e) {
                first = first == null ? e : first;
            }
        }
        drain();
        if (first != null) {
            throw first;
        }
    }
}
