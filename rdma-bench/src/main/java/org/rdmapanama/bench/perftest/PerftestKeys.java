package org.rdmapanama.bench.perftest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;

/**
 * One side's QP address as native perftest's TCP handshake carries it: a
 * NUL-terminated line of colon-separated hex fields, 108 bytes when the ports
 * use a GID (RoCE, or {@code -x}) and 59 without:
 * <pre>
 *  lid(4):out_reads(4):qpn(6):psn(6):rkey(8):vaddr(16)[:gid byte(2) x16]:srqn(8)[:]  NUL padding
 * </pre>
 * Both sides send the same form (each picks it from its own GID index), so a
 * reader expects the length it writes. {@code vaddr} is where the peer's RDMA
 * Writes and Reads go: for perftest the second half of its buffer.
 *
 * @param gid 16 bytes, or null for the form without one
 */
record PerftestKeys(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, byte[] gid, int srqn) {
    static final int SIZE = 59;
    static final int SIZE_GID = 108;

    int size() {
        return gid != null ? SIZE_GID : SIZE;
    }

    byte[] encode() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%04x:%04x:%06x:%06x:%08x:%016x:", lid & 0xffff,
                outReads & 0xffff, qpn & 0xffffff, psn & 0xffffff, Integer.toUnsignedLong(rkey), vaddr));
        if (gid != null) {
            for (byte b : gid) {
                sb.append(String.format(Locale.ROOT, "%02x:", b & 0xff));
            }
            sb.append(String.format(Locale.ROOT, "%08x:", Integer.toUnsignedLong(srqn)));
        } else {
            sb.append(String.format(Locale.ROOT, "%08x", Integer.toUnsignedLong(srqn)));
        }
        byte[] text = sb.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] msg = new byte[size()];
        System.arraycopy(text, 0, msg, 0, text.length); // the rest stays NUL, as sprintf into a zeroed buffer
        return msg;
    }

    /**
     * Parses a peer's line; {@code withGid} is the form this side sends.
     *
     * @throws IllegalArgumentException with perftest's "Couldn't parse line" and the text
     */
    static PerftestKeys decode(byte[] msg, boolean withGid) {
        int end = 0;
        while (end < msg.length && msg[end] != 0) {
            end++;
        }
        String line = new String(msg, 0, end, StandardCharsets.US_ASCII);
        String[] f = line.split(":", -1);
        int expected = withGid ? 24 : 7; // with a GID the line ends in ':', leaving an empty last field
        if (f.length != expected || (withGid && !f[23].isEmpty())) {
            throw new IllegalArgumentException("Couldn't parse line <" + line + ">: the peer's QP address has "
                    + f.length + " fields, expected " + expected + " (do both sides use a GID, -x?)");
        }
        try {
            byte[] gid = null;
            if (withGid) {
                gid = new byte[16];
                for (int i = 0; i < 16; i++) {
                    gid[i] = (byte) Integer.parseInt(f[6 + i], 16);
                }
            }
            return new PerftestKeys(Integer.parseInt(f[0], 16), Integer.parseInt(f[1], 16), Integer.parseInt(f[2], 16),
                    Integer.parseInt(f[3], 16), Integer.parseUnsignedInt(f[4], 16), Long.parseUnsignedLong(f[5], 16), gid,
                    Integer.parseUnsignedInt(f[withGid ? 22 : 6], 16));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Couldn't parse line <" + line + ">: " + e.getMessage(), e);
        }
    }

    /** {@code sizeof(struct pingpong_dest)}: the form perftest sends as a Send over rdma_cm ({@code -R}). */
    static final int SIZE_STRUCT = 56;

    /**
     * The struct form, big-endian: lid, out_reads, qpn, psn, rkey (4 bytes each), 4 bytes of
     * padding, vaddr (8), gid (16), srqn, gid_index (4 each).
     */
    byte[] encodeStruct(int gidIndex) {
        ByteBuffer b = ByteBuffer.allocate(SIZE_STRUCT);
        b.putInt(lid).putInt(outReads).putInt(qpn).putInt(psn).putInt(rkey).putInt(0).putLong(vaddr);
        b.put(gid != null ? gid : new byte[16]).putInt(srqn).putInt(gidIndex);
        return b.array();
    }

    static PerftestKeys decodeStruct(byte[] msg) {
        if (msg.length < SIZE_STRUCT) {
            throw new IllegalArgumentException("the peer's QP address has " + msg.length + " bytes, expected " + SIZE_STRUCT);
        }
        ByteBuffer b = ByteBuffer.wrap(msg);
        int lid = b.getInt(), outReads = b.getInt(), qpn = b.getInt(), psn = b.getInt(), rkey = b.getInt();
        b.getInt();
        long vaddr = b.getLong();
        byte[] gid = new byte[16];
        b.get(gid);
        return new PerftestKeys(lid, outReads, qpn, psn, rkey, vaddr, gid, b.getInt());
    }

    /** perftest's GID type check: both IPv4-mapped (::ffff:a.b.c.d) or both not. */
    static boolean sameGidType(byte[] a, byte[] b) {
        return a == null || b == null || v4Mapped(a) == v4Mapped(b);
    }

    private static boolean v4Mapped(byte[] g) {
        for (int i = 0; i < 10; i++) {
            if (g[i] != 0) {
                return false;
            }
        }
        return g[10] == (byte) 0xff && g[11] == (byte) 0xff;
    }

    @Override
    public String toString() {
        return new String(encode(), StandardCharsets.US_ASCII).trim() + (gid == null ? "" : " gid " + HexFormat.of().formatHex(gid));
    }
}
