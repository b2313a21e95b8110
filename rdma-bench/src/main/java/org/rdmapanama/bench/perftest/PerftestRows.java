package org.rdmapanama.bench.perftest;

import java.util.Locale;

/**
 * perftest's report lines, byte for byte: the column headers, the result rows of
 * {@link PerftestStats}' figures, and the C formats of the address lines. The
 * interop tests and scripts/bench/lab-run read them as they read perftest's.
 */
public final class PerftestRows {
    private PerftestRows() {}

    public static final String RESULT_LINE = "---------------------------------------------------------------------------------------";
    public static final String RESULT_FMT_LAT = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            + "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    static final String RESULT_FMT_LAT_DUR = " #bytes        #iterations       t_avg[usec]    tps average";
    public static final String RESULT_FMT_BW = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
    static final String RESULT_FMT_BW_G = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";

    public static String row(PerftestStats.Latency l) {
        return String.format(Locale.ROOT, " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f",
                l.size(), l.iters(), l.min(), l.max(), l.typical(), l.avg(), l.stdev(), l.p99(), l.p999());
    }

    public static String row(PerftestStats.LatencyDuration l) {
        return String.format(Locale.ROOT, " %-7d       %d            %-7.2f        %-7.2f", l.size(), l.iters(), l.avg(), l.tps());
    }

    public static String row(PerftestStats.Bandwidth b) {
        return String.format(Locale.ROOT, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f",
                b.size(), b.iters(), b.peak(), b.avg(), b.msgRate());
    }

    /**
     * C's {@code %#0Nx}: "0x" and zero-padded hex to a total width of N, but a
     * plain zero-padded 0 (the '#' flag adds no prefix to zero).
     */
    static String cHex(long value, int width) {
        if (value == 0) {
            return "0".repeat(width);
        }
        String hex = Long.toHexString(value);
        int pad = width - 2 - hex.length();
        return "0x" + (pad > 0 ? "0".repeat(pad) : "") + hex;
    }

    /** perftest's GID line: the 16 bytes in decimal ({@code %02d}), colon-separated. */
    static String gidLine(byte[] gid) {
        StringBuilder sb = new StringBuilder(" GID: ");
        for (int i = 0; i < gid.length; i++) {
            sb.append(i == 0 ? "" : ":").append(String.format(Locale.ROOT, "%02d", gid[i] & 0xff));
        }
        return sb.toString();
    }
}
