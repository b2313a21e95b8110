package org.rdmapanama.verbs;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * How a peer reaches a queue pair without rdma_cm, as perftest and
 * ibv_rc_pingpong exchange it: LID (InfiniBand), QP number, starting packet
 * sequence number and GID (RoCE, or IB across subnets).
 *
 * @param lid the port's LID; 0 on RoCE
 * @param qpn the 24-bit QP number
 * @param psn the 24-bit first packet sequence number
 * @param gid 16 bytes; all zero when the peer uses no GRH (plain IB)
 */
public record QpAddress(int lid, int qpn, int psn, byte[] gid) {
    public QpAddress {
        if (lid < 0 || lid > 0xffff) {
            throw new IllegalArgumentException("LID out of range (0..65535): " + lid);
        }
        if (qpn < 0 || qpn > 0xffffff) {
            throw new IllegalArgumentException("QP number out of range (24 bits): " + qpn);
        }
        if (psn < 0 || psn > 0xffffff) {
            throw new IllegalArgumentException("PSN out of range (24 bits): " + psn);
        }
        if (gid == null || gid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + (gid == null ? "null" : gid.length));
        }
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** True if the GID is all zeros: address by LID only. */
    public boolean hasGid() {
        for (byte b : gid) {
            if (b != 0) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QpAddress a && a.lid == lid && a.qpn == qpn && a.psn == psn && Arrays.equals(a.gid, gid);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(gid) * 31 + qpn;
    }

    @Override
    public String toString() {
        return String.format("LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", lid, qpn, psn, HexFormat.of().formatHex(gid));
    }
}
