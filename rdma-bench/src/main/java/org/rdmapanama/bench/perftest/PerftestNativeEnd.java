package org.rdmapanama.bench.perftest;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;

/**
 * How a run against native perftest ends, on the TCP exchange, as each of
 * perftest's tests ends (their {@code main}s):
 * <ul>
 *   <li>write_lat: nothing; both sides have seen every write and just leave;</li>
 *   <li>write_bw, read_bw: a handshake (the server waits there for the whole
 *       run), the client's figures for its last size, which the server prints
 *       as its row, then the closing handshake and "done";</li>
 *   <li>the others: the closing handshake and "done" (a read_lat or atomic_lat
 *       server waits in it while the client runs).</li>
 * </ul>
 * The waits may last the peer's whole run, hence the run's own timeout.
 */
final class PerftestNativeEnd {
    private final PerftestPath link;
    private final PerftestBandwidth bandwidth;
    private final Duration timeout;

    PerftestNativeEnd(PerftestPath link, PerftestBandwidth bandwidth, Duration timeout) {
        this.link = link;
        this.bandwidth = bandwidth;
        this.timeout = timeout;
    }

    void finish(PrintStream out) throws IOException {
        PerftestExchange x = link.exchange();
        PerftestKeys mine = link.lanes()[0].keys();
        switch (link.options().test) {
            case WRITE_LAT -> { }
            case WRITE_BW, READ_BW -> {
                x.handshake(mine, timeout);
                // The server's own figures are zeros: it only waited. perftest sends them all the same.
                PerftestStats.Bandwidth figures = link.server() || bandwidth.lastReport() == null
                        ? new PerftestStats.Bandwidth(0, 0, 0, 0, 0) : bandwidth.lastReport();
                PerftestStats.Bandwidth client = x.report(figures, timeout);
                if (link.server()) {
                    out.println(PerftestRows.row(client));
                }
                x.closeConnection(mine, timeout);
            }
            default -> x.closeConnection(mine, timeout);
        }
    }
}
