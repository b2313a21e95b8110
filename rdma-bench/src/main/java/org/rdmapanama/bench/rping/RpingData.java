package org.rdmapanama.bench.rping;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** rping's ping text, written into and read from native buffers. One per peer (it keeps a digit buffer). */
final class RpingData {
    private static final byte[] PREFIX = "rdma-ping-".getBytes(StandardCharsets.US_ASCII);
    private static final byte FIRST = 'A';
    private static final byte LAST = 'z';

    private final byte[] digits = new byte[11];

    /**
     * rping's ping data: {@code "rdma-ping-%d: "}, then letters from 'A' + ping
     * (mod 58) rising through 'z' and wrapping to 'A', and a final NUL.
     * Writes native memory only: no String per ping.
     */
    void fill(MemorySegment buf, int ping) {
        int size = (int) buf.byteSize();
        int n = 0;
        for (byte b : PREFIX) {
            n = put(buf, n, b, size);
        }
        int d = digits.length;
        long v = Math.abs((long) ping);
        do {
            digits[--d] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v > 0);
        if (ping < 0) {
            digits[--d] = '-';
        }
        for (; d < digits.length; d++) {
            n = put(buf, n, digits[d], size);
        }
        n = put(buf, n, (byte) ':', size);
        n = put(buf, n, (byte) ' ', size);
        // n is what snprintf returns: the full length, even if the header was cut short.
        byte c = (byte) (FIRST + Math.floorMod(ping, LAST - FIRST + 1));
        for (int i = n; i < size; i++) {
            buf.set(JAVA_BYTE, i, c);
            c = c == LAST ? FIRST : (byte) (c + 1);
        }
        buf.set(JAVA_BYTE, size - 1, (byte) 0);
    }

    private static int put(MemorySegment buf, int at, byte b, int size) {
        if (at < size - 1) {
            buf.set(JAVA_BYTE, at, b);
        }
        return at + 1;
    }

    /** The bytes before the first NUL (at most all of them): what rping prints with %s. */
    static String text(MemorySegment s) {
        int n = strlen(s, (int) s.byteSize());
        return new String(s.asSlice(0, n).toArray(JAVA_BYTE), StandardCharsets.ISO_8859_1);
    }

    static int strlen(MemorySegment s, int max) {
        for (int i = 0; i < max; i++) {
            if (s.get(JAVA_BYTE, i) == 0) {
                return i;
            }
        }
        return max;
    }
}
