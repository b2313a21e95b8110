package org.rdmapanama.nettybench;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One side of a client: its transport and driver, made again after a case failed (the failure may have closed
 * the connections), and the cases that failed, which are not run again.
 */
final class SideRun implements AutoCloseable {
    final Side side;
    private final Endpoint endpoint;
    private final InetSocketAddress at;
    private final int connections;
    private final Set<List<Object>> failed = new HashSet<>();
    private NettyNet net;
    private Driver driver;
    private boolean dead;

    SideRun(Side side, Endpoint endpoint, String server, int connections) throws Exception {
        this.side = side;
        this.endpoint = endpoint;
        InetAddress to = server != null ? InetAddress.getByName(server) : endpoint.address(side);
        this.at = new InetSocketAddress(to, endpoint.port(side));
        this.connections = connections;
    }

    /** Makes the driver and its connections (again, after a failure); false when that failed: the side is dead. */
    boolean open(PrintStream err) {
        try {
            long t0 = System.nanoTime();
            if (side != Side.CHANNEL) {
                net = NettyNet.of(side, endpoint);
            }
            driver = switch (side) {
                case CHANNEL -> new ChannelEcho.Client(endpoint, at);
                case NETTY_RDMA, NETTY_EPOLL -> new NettyEcho.Client(net, at, side.label);
                case GRPC_RDMA, GRPC_EPOLL -> new GrpcEcho.Client(net, at, side.series());
            };
            driver.connect(connections);
            err.printf(java.util.Locale.ROOT, "client: %s, %d connections to %s in %.1f s%n", side.label, connections,
                    at, (System.nanoTime() - t0) / 1e9);
            return true;
        } catch (Exception e) {
            err.println("client: FAILED " + side.label + ": cannot connect to " + at + ": " + e);
            close();
            dead = true;
            return false;
        }
    }

    Driver driver() {
        return driver;
    }

    boolean dead() {
        return dead;
    }

    boolean failed(int mode, Result.Case c) {
        return dead || failed.contains(List.of(mode, c));
    }

    /** A case failed: it is not run again, and the side starts over with new connections. */
    void fail(int mode, Result.Case c, Throwable cause, PrintStream err) {
        failed.add(List.of(mode, c));
        Throwable t = cause instanceof java.util.concurrent.ExecutionException && cause.getCause() != null
                ? cause.getCause() : cause;
        err.println("client: FAILED " + side.series().get(mode) + " " + c.label() + ": " + t);
        close();
        open(err);
    }

    /** Stops the server's side (its STOP); a dead side's server is left to the runner. */
    void stopServer(PrintStream err) {
        if (dead || driver == null) {
            return;
        }
        try {
            driver.serverCpu(true);
        } catch (Exception e) {
            err.println("client: " + side.label + ": the server's STOP failed: " + e);
        }
    }

    @Override
    public void close() {
        try {
            if (driver != null) {
                driver.close();
            }
        } catch (Exception e) {
            // closing after a failure: the connections may be gone already
        }
        driver = null;
        try {
            if (net != null) {
                net.close();
            }
        } catch (Exception e) {
            // as above
        }
        net = null;
    }
}
