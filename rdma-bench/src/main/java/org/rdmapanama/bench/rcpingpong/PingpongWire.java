package org.rdmapanama.bench.rcpingpong;

import org.rdmapanama.verbs.QpAddress;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The out-of-band message of libibverbs' pingpong examples (ibv_rc_pingpong
 * and friends): {@code "LLLL:QQQQQQ:PPPPPP:GGGG...G\0"}, 52 bytes, with LID,
 * QPN and PSN in hex and the GID as 32 hex digits in network byte order.
 * Decoding checks every field; anything else is a {@link MalformedPeerMessageException}.
 */
public final class PingpongWire {
    private PingpongWire() {}

    /** {@code sizeof "0000:000000:000000:00000000000000000000000000000000"}, the NUL included. */
    public static final int SIZE = 52;

    private static final Pattern FORMAT = Pattern.compile("([0-9a-fA-F]{4}):([0-9a-fA-F]{6}):([0-9a-fA-F]{6}):([0-9a-fA-F]{32})");

    public static byte[] encode(QpAddress a) {
        String s = String.format("%04x:%06x:%06x:%s", a.lid(), a.qpn(), a.psn(), HexFormat.of().formatHex(a.gid()));
        byte[] msg = new byte[SIZE];
        byte[] text = s.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(text, 0, msg, 0, text.length); // the rest stays 0: the C string's NUL
        return msg;
    }

    /**
     * Parses a peer's message of exactly {@link #SIZE} bytes.
     *
     * @throws MalformedPeerMessageException naming what is wrong, with the bytes shown
     */
    public static QpAddress decode(byte[] msg, int length) throws MalformedPeerMessageException {
        if (length != SIZE) {
            throw new MalformedPeerMessageException("peer's address message has " + length + " bytes, expected "
                    + SIZE + " (\"LLLL:QQQQQQ:PPPPPP:<32 hex GID>\\0\"): " + show(msg, length));
        }
        if (msg[SIZE - 1] != 0) {
            throw new MalformedPeerMessageException("peer's address message is not NUL-terminated: " + show(msg, length));
        }
        String text = new String(msg, 0, SIZE - 1, StandardCharsets.US_ASCII);
        Matcher m = FORMAT.matcher(text);
        if (!m.matches()) {
            throw new MalformedPeerMessageException("peer's address message is not LLLL:QQQQQQ:PPPPPP:<32 hex GID>: "
                    + show(msg, length));
        }
        return new QpAddress(Integer.parseInt(m.group(1), 16), Integer.parseInt(m.group(2), 16),
                Integer.parseInt(m.group(3), 16), HexFormat.of().parseHex(m.group(4)));
    }

    static String show(byte[] msg, int length) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < Math.min(length, 64); i++) {
            int c = msg[i] & 0xff;
            sb.append(c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("\\x%02x", c));
        }
        return sb.append(length > 64 ? "...\"" : "\"").toString();
    }
}
