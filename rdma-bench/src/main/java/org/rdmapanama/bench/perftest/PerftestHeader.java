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

    static void print(PrintStream out, PerftestLink link) {
        PerftestOptions o = link.o;
        Test test = o.test;
        boolean server = link.server;
        Port port = link.selection.port();
        String line = PerftestStats.RESULT_LINE;
        out.println(line);
        out.println("                    " + test.banner(o.fetchAndAdd));
        out.println(" Dual-port       : OFF\t\tDevice         : " + link.ctx.device().name());
        out.println(" Number of qps   : " + link.qpCount() + "\t\tTransport type : " + (link.ctx.transport() == Transport.IWARP ? "IW" : "IB"));
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
        out.println(" Mtu             : " + (link.mtuBytes > 0 ? link.mtuBytes : port.activeMtu()) + "[B]");
        out.println(" Link type       : " + (port.linkLayer() == LinkLayer.ETHERNET ? "Ethernet" : "IB"));
        if (o.gidIndex != null || o.rdmaCm) {
            out.println(" GID index       : " + link.gidIndex);
        }
        if (test.verb == Verb.READ || test.verb == Verb.ATOMIC) {
            out.println(" Outstand reads  : " + link.outReads);
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
        address(out, link, "local", link.mine);
        for (int i = 1; i < link.qpCount(); i++) {
            address(out, link, "local", withKeys(link.mine, link.keys[i]));
        }
        address(out, link, "remote", link.peer);
        for (int i = 1; i < link.qpCount(); i++) {
            address(out, link, "remote", withKeys(link.peer, link.peerKeys[i]));
        }
        out.println(line);
    }

    private static PerftestWire withKeys(PerftestWire w, PerftestKeys k) {
        return new PerftestWire(w.test(), w.flags(), w.qps(), w.lid(), w.size(), w.iters(), k.qpn(), k.psn(), k.vaddr(),
                k.rkey(), w.length(), w.gid());
    }

    private static void address(PrintStream out, PerftestLink link, String side, PerftestWire w) {
        Verb verb = link.o.test.verb;
        StringBuilder sb = new StringBuilder(" ").append(side).append(" address: LID ")
                .append(PerftestStats.cHex(w.lid(), 4)).append(" QPN ").append(PerftestStats.cHex(w.qpn(), 6))
                .append(" PSN ").append(PerftestStats.cHex(w.psn(), 6));
        if (verb == Verb.READ) {
            sb.append(" OUT ").append(PerftestStats.cHex(link.outReads, 4));
        }
        if (!link.o.rdmaCm && (verb == Verb.READ || verb == Verb.WRITE)) {
            sb.append(" RKey ").append(PerftestStats.cHex(Integer.toUnsignedLong(w.rkey()), 8))
                    .append(" VAddr ").append(PerftestStats.cHex(w.address(), 16));
        }
        out.println(sb);
        if (link.gidIndex >= 0) {
            out.println(PerftestStats.gidLine(w.gid()));
        }
    }

    /** Whether this side prints result rows: perftest's read_lat and atomic_lat servers print none. */
    static boolean printsRows(PerftestOptions o) {
        return o.test.bw || !o.isServer() || o.test.verb == Verb.WRITE || o.test.verb == Verb.SEND;
    }

    /** The column header above the rows. */
    static String columns(PerftestOptions o) {
        return o.test.bw ? (o.reportGbits ? PerftestStats.RESULT_FMT_BW_G : PerftestStats.RESULT_FMT_BW)
                : o.duration != null ? PerftestStats.RESULT_FMT_LAT_DUR : PerftestStats.RESULT_FMT_LAT;
    }
}
