package org.rdmapanama.bench.perftest;

import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.MemoryRegion;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.rdmapanama.bench.perftest.PerftestLink.SETUP_TIMEOUT;
import static org.rdmapanama.bench.perftest.PerftestLink.closeQuietly;

/**
 * perftest's {@code -R}: a first rdma_cm connection carries the exchange ({@link PerftestCmExchange}), then
 * a second one, to the same port, is the test's, with a handshake on either side of its set-up, then one
 * more per further QP ({@code -q}). perftest's server listens again for the test's connection only after
 * the first of those handshakes, so a client retries as perftest's does (10 times, 100 ms apart). Owns the
 * listener, the test's connections and the region's registrations in the further connections' PDs; the
 * link's own resources are set up on the first test connection ({@link PerftestLink#setUpOn}).
 */
final class PerftestCmSetup implements AutoCloseable {
    private final PerftestLink link;
    private final PerftestOptions o;
    private final PrintStream out;
    private RdmaListener listener;
    /** The test's connections, in QP order: the first, then one per further QP. */
    private final List<RdmaConnection> connections = new ArrayList<>();
    /** The region registered again in the PD of each connection after the first. */
    private final List<MemoryRegion> aliases = new ArrayList<>();

    PerftestCmSetup(PerftestLink link, PerftestOptions o, PrintStream out) {
        this.link = link;
        this.o = o;
        this.out = out;
    }

    void connect(RdmaConfig config) throws IOException, InterruptedException {
        List<RdmaDevice> devices = RdmaDevices.require();
        int outReads = PerftestDevice.outstandingReads(devices.stream().map(RdmaDevice::capabilities).toList());
        link.outReads(outReads);
        ConnectionOptions opts = new ConnectionOptions(o.txDepth + 2, o.rxDepth(), 1, 1, o.inline(),
                o.txDepth + o.rxDepth() + 16, outReads, 7, 7, false); // perftest's selective signaling
        // A device (or transport) asked for picks the address; otherwise rdma_cm picks by the peer's address.
        boolean pinned = config.device().isPresent() || config.transport().isPresent();
        InetAddress local = pinned ? Selection.select(config, devices).ipAddress() : null;
        PerftestKeys none = new PerftestKeys(0, 0, 0, 0, 0, 0, null, 0); // perftest's are still zero then
        if (link.server()) {
            InetSocketAddress at = local != null ? new InetSocketAddress(local, o.port) : new InetSocketAddress(o.port);
            listener = RdmaListener.bind(at, Math.max(2, o.numQps), opts); // perftest's client connects its QPs at once
            PerftestHeader.waiting(out);
            RdmaConnection comm = accepted(at);
            PerftestExchange x = exchangeOn(comm);
            comm.accept(new byte[0], SETUP_TIMEOUT);
            link.exchangeUp(comm);
            x.handshake(none, SETUP_TIMEOUT);
            RdmaConnection first = accepted(at);
            connections.add(first);
            link.setUpOn(first);
            first.accept(new byte[0], SETUP_TIMEOUT);
            for (int i = 1; i < o.numQps; i++) {
                // In the order the requests come, as perftest's server numbers them (its client connects in QP order).
                RdmaConnection c = accepted(at);
                connections.add(c);
                setUpMore(c);
                c.accept(new byte[0], SETUP_TIMEOUT);
            }
        } else {
            InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(o.server), o.port);
            InetSocketAddress from = local == null ? null : new InetSocketAddress(local, 0);
            RdmaConnection comm = RdmaConnection.resolve(to, from, opts, SETUP_TIMEOUT);
            PerftestExchange x = exchangeOn(comm);
            comm.connect(new byte[0], SETUP_TIMEOUT);
            link.exchangeUp(comm);
            x.handshake(none, SETUP_TIMEOUT);
            for (int i = 0; i < o.numQps; i++) {
                // One at a time, so that the server sees them in our QP order (the handshakes carry them in it).
                connections.add(connectData(to, from, opts, i == 0));
            }
        }
        link.exchange().handshake(none, SETUP_TIMEOUT);
    }

    /** The test's first connection: lane 0's, whose rdma_cm events the peer watch reads. */
    RdmaConnection first() {
        return connections.getFirst();
    }

    List<RdmaConnection> connections() {
        return connections;
    }

    /** The region as each connection's PD knows it, in QP order: {@code first} (the link's), then the aliases. */
    List<MemoryRegion> regions(MemoryRegion first) {
        List<MemoryRegion> all = new ArrayList<>(List.of(first));
        all.addAll(aliases);
        return all;
    }

    private RdmaConnection accepted(InetSocketAddress at) throws RdmaException, InterruptedException {
        RdmaConnection c = listener.accept(SETUP_TIMEOUT);
        if (c == null) {
            throw new RdmaException("no client connected through rdma_cm to " + at + " within "
                    + SETUP_TIMEOUT.toSeconds() + " s");
        }
        return c;
    }

    private PerftestExchange exchangeOn(RdmaConnection comm) throws RdmaException {
        try {
            link.checkDevice(comm.context()); // refused before anything is sent, as without -R
            PerftestExchange x = new PerftestCmExchange(comm, !link.server(), Math.max(0, comm.context().selection().gidIndex()));
            link.exchange(x); // the link closes it, and with it comm, from here on
            return x;
        } catch (RdmaException | RuntimeException e) {
            closeQuietly(comm);
            throw e;
        }
    }

    /** A test connection: the first (on which the link sets up its resources) or a further QP's. */
    private RdmaConnection connectData(InetSocketAddress to, InetSocketAddress from, ConnectionOptions opts,
                                       boolean first) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            RdmaConnection c = RdmaConnection.resolve(to, from, opts, SETUP_TIMEOUT);
            try {
                if (first) {
                    link.setUpOn(c); // receives are posted before the peer can send
                } else {
                    setUpMore(c);
                }
            } catch (RdmaException | RuntimeException e) {
                closeQuietly(c);
                throw e;
            }
            try {
                c.connect(new byte[0], SETUP_TIMEOUT);
                return c;
            } catch (RdmaException e) {
                if (first) {
                    link.abandonFirst();
                } else {
                    closeQuietly(aliases.removeLast());
                }
                closeQuietly(c);
                if (attempt == 10) {
                    throw new RdmaException("the test's rdma_cm connection to " + to + " failed 10 times: "
                            + e.getMessage(), e);
                }
                Thread.sleep(100);
            }
        }
    }

    /** A further QP's connection: on the first one's device, with the region registered again in its PD. */
    private void setUpMore(RdmaConnection c) throws RdmaException {
        link.checkDevice(c.context());
        String device = link.context().device().name();
        if (!c.context().device().name().equals(device)) {
            throw new RdmaException("rdma_cm put a further QP's connection on " + c.context().device().name()
                    + ", the first on " + device);
        }
        aliases.add(c.protectionDomain().register(link.mem(), link.remoteAccess()));
    }

    void closeRegions() {
        aliases.forEach(PerftestLink::closeQuietly);
        aliases.clear();
    }

    /**
     * The client disconnects; the server waits (a while) for that, so that neither flushes the other's last
     * WRs. One deadline for all: a client gone without disconnecting costs a server 10 s, not 10 s a QP.
     */
    void endConnections() {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (RdmaConnection c : connections.reversed()) {
            try {
                if (link.server()) {
                    c.awaitDisconnect(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                } else {
                    c.disconnect();
                }
            } catch (RdmaException e) {
                // closing anyway
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeQuietly(c);
        }
        connections.clear();
    }

    @Override
    public void close() {
        closeQuietly(listener);
    }
}
