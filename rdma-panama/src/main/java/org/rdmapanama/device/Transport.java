package org.rdmapanama.device;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How a device moves RDMA traffic. Derived from the device's transport type,
 * the port's link layer and its GID types; never from the device's name.
 */
public enum Transport {
    /** IB transport on an InfiniBand fabric: LID addressing, lossless. */
    INFINIBAND("InfiniBand", "infiniband", "ib"),
    /** IB transport over UDP/IP (port 4791): routable, needs a RoCEv2 GID. */
    ROCE_V2("RoCEv2", "rocev2", "roce_v2", "roce"),
    /** IB transport directly over Ethernet: one L2 domain. */
    ROCE_V1("RoCEv1", "rocev1", "roce_v1"),
    /** RDMAP/DDP/MPA over TCP: connects only through rdma_cm, RC only. */
    IWARP("iWARP", "iwarp");

    private final String displayName;
    private final String[] aliases;

    Transport(String displayName, String... aliases) {
        this.displayName = displayName;
        this.aliases = aliases;
    }

    /**
     * Unreliable Datagram queue pairs and address handles. iWARP runs over
     * TCP and is RC only.
     */
    public boolean supportsUd() {
        return this != IWARP;
    }

    /**
     * Whether a connection can only be set up through rdma_cm: an iWARP QP
     * rides a TCP stream that the kernel's iw_cm opens, so exchanging QP
     * numbers out of band (rc_pingpong, perftest without -R) cannot work.
     */
    public boolean connectsOnlyThroughRdmaCm() {
        return this == IWARP;
    }

    /**
     * Whether a Send that finds no receive posted is retried (an RNR NAK, on
     * InfiniBand and RoCE) rather than ending the connection (iWARP has no RNR
     * flow control), so a sender that may outrun its peer needs credits.
     */
    public boolean retriesReceiverNotReady() {
        return this != IWARP;
    }

    /** Send and RDMA Write with immediate data; iWARP's RDMAP has no immediate field. */
    public boolean supportsImmediateData() {
        return this != IWARP;
    }

    /**
     * The most private data {@code rdma_connect} can carry: the IB CM REQ's 92
     * bytes less rdma_cm's 36-byte header, or MPA's 512 on iWARP. On InfiniBand
     * and RoCE the peer receives it zero-padded to the full size, so messages
     * should carry their own length or format.
     */
    public int maxConnectPrivateData() {
        return this == IWARP ? 512 : 56;
    }

    /** The most private data {@code rdma_accept} can carry: the IB CM REP's 196 bytes, or MPA's 512 on iWARP. */
    public int maxAcceptPrivateData() {
        return this == IWARP ? 512 : 196;
    }

    /** The usual spelling: {@code InfiniBand}, {@code RoCEv2}, {@code RoCEv1}, {@code iWARP}. */
    public String displayName() {
        return displayName;
    }

    /**
     * Parses a configuration value such as {@code iwarp}, {@code RoCEv2},
     * {@code roce} (meaning v2) or {@code ib}, ignoring case.
     *
     * @throws IllegalArgumentException naming the value and listing the accepted ones
     */
    public static Transport parse(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        for (Transport t : values()) {
            if (t.name().toLowerCase(Locale.ROOT).equals(v) || Arrays.asList(t.aliases).contains(v)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport '" + value + "'; expected one of: "
                + Arrays.stream(values()).map(t -> String.join("|", t.aliases)).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return displayName;
    }
}
