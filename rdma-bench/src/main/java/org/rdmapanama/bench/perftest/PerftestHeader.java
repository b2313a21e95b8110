package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.perftest.PerftestOptions.Test;
import org.rdmapanama.bench.perftest.PerftestOptions.Verb;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.Transport;

import java.io.PrintStream;

/**
 * perftest's report text around the rows: the server's waiting banner, the
 * test description ({@code ctx_print_test_info}), both QP addresses
 * ({@code ctx_print_pingpong_data}) and the column header. scripts/bench/lab-run
 * parses these lines: their layout is perftest's, byte for byte.
 */
final class PerftestHeader {
    private PerftestHeader() {}

    /** perftest's server banner; printed once listening, so a script (or test) may start the client then. */
    static void waiting(PrintStream out) {
        out.println();
        out.println("************************************");
        out.println("* Waiting for client to connect... *");
        out.println("************************************");
        out.flush();
    }

    static void print(PrintStream out, PerftestPath link) {
        PerftestOptions o = link.options();
        Test test = o.test;
        boolean server = link.server();
        Port port = link.selection().port();
        PerftestLane[] lanes = link.lanes();
        String line = PerftestRows.RESULT_LINE;
        out.println(line);
        out.println("                    " + test.banner(o.fetchAndAdd));
        out.println(" Dual-port       : OFF\t\tDevice         : " + link.context().device().name());
        out.println(" Number of qps   : " + lanes.length + "\t\tTransport type : " + (link.context().transport() == Transport.IWARP ? "IW" : "IB"));
        out.println(" Connection type : RC\t\tUsing SRQ      : OFF");
        out.println(" PCIe relax order: OFF");
        out.println(" ibv_wr* API     : OFF");
        if (!server) {
            out.println(" TX depth        : " + o.txDepth);
        }
        if (test.verb == Verb.SEND && server) {
            out.println(" RX depth        : " + o.rxDepth());
        }
        if (test.bw) {
            out.println(" CQ Moderation   : " + o.cqMod());
        }
        // The MTU both sides agreed on in perftest's exchange: the smaller of the two.
        out.println(" Mtu             : " + (link.mtuBytes() > 0 ? link.mtuBytes() : port.activeMtu()) + "[B]");
        out.println(" Link type       : " + (port.linkLayer() == LinkLayer.ETHERNET ? "Ethernet" : "IB"));
        if (o.gidIndex != null || o.rdmaCm) {
            out.println(" GID index       : " + link.gidIndex());
        }
        if (test.verb == Verb.READ || test.verb == Verb.ATOMIC) {
            out.println(" Outstand reads  : " + link.outReads());
        } else {
            out.println(" Max inline data : " + o.inline() + "[B]");
        }
        out.println(" rdma_cm QPs\t : " + (o.rdmaCm ? "ON" : "OFF"));
        out.println(" Data ex. method : " + (o.rdmaCm ? "rdma_cm" : "Ethernet"));
        if (o.rdmaCm && server) {
            out.println(line);
            out.println(" Waiting for client rdma_cm QP to connect");
            out.println(" Please run the same command with the IB/RoCE interface IP");
        }
        out.println(line);
        // perftest's: every QP's local address, then every QP's remote one.
        for (PerftestLane l : lanes) {
            address(out, link, "local", l.keys());
        }
        for (PerftestLane l : lanes) {
            address(out, link, "remote", l.peerKeys());
        }
        out.println(line);
    }

    private static void address(PrintStream out, PerftestPath link, String side, PerftestKeys k) {
        Verb verb = link.options().test.verb;
        StringBuilder sb = new StringBuilder(" ").append(side).append(" address: LID ")
                .append(PerftestRows.cHex(k.lid(), 4)).append(" QPN ").append(PerftestRows.cHex(k.qpn(), 6))
                .append(" PSN ").append(PerftestRows.cHex(k.psn(), 6));
        if (verb == Verb.READ) {
            sb.append(" OUT ").append(PerftestRows.cHex(link.outReads(), 4));
        }
        if (!link.options().rdmaCm && (verb == Verb.READ || verb == Verb.WRITE)) {
            sb.append(" RKey ").append(PerftestRows.cHex(Integer.toUnsignedLong(k.rkey()), 8))
                    .append(" VAddr ").append(PerftestRows.cHex(k.vaddr(), 16));
        }
        out.println(sb);
        if (link.gidIndex() >= 0) {
            out.println(PerftestRows.gidLine(k.gid() != null ? k.gid() : new byte[16]));
        }
    }

    /** Whether this side prints result rows: perftest's read_lat and atomic_lat servers print none. */
    static boolean printsRows(PerftestOptions o) {
        return o.test.bw || !o.isServer() || o.test.verb == Verb.WRITE || o.test.verb == Verb.SEND;
    }

    /** The column header above the rows. */
    static String columns(PerftestOptions o) {
        return o.test.bw ? (o.reportGbits ? PerftestRows.RESULT_FMT_BW_G : PerftestRows.RESULT_FMT_BW)
                : o.duration != null ? PerftestRows.RESULT_FMT_LAT_DUR : PerftestRows.RESULT_FMT_LAT;
    }
}
