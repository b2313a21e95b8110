package org.rdmapanama.bench.channel;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The checked stream's message: {seq i64, length i32, CRC32C i32} then a payload that is a function of
 * the sequence number. The CRC covers the sequence number and the length as well as the payload, so a
 * slot holding an older message, a truncated one or two run together cannot pass as the one expected.
 * <p>
 * One instance per side, used from one thread (its channel's loop). It works in a scratch array of the
 * largest message, allocated once, because {@link CRC32C} takes arrays or ByteBuffers and a
 * MemorySegment's ByteBuffer view would be an allocation per message.
 */
final class StreamCheck {
    static final int HEADER = 16;
    /** Sequence numbers of the control messages; data is numbered from 0. */
    static final long START = -1;
    static final long END = -2;
    /** Receiver's report: received, out of order, duplicated, missing, bad, bytes. */
    static final int REPORT_BYTES = 6 * Long.BYTES;

    private final byte[] scratch;
    private final ByteBuffer longs;
    private final CRC32C crc = new CRC32C();

    // The receiver's counts for the current stream; the bitmap is sized once per stream by START.
    private long[] seen = new long[0];
    private long cap;
    private long next;
    private long distinct;
    long received;
    long outOfOrder;
    long duplicated;
    long bad;
    long bytes;

    StreamCheck(int largest) {
        scratch = new byte[Math.max(largest, HEADER)];
        longs = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Writes message {@code seq} of {@code length} bytes into {@code dst}. */
    void fill(long seq, int length, MemorySegment dst) {
        longs.putLong(0, seq);
        longs.putInt(8, length);
        int i = HEADER;
        for (long k = 0; i + Long.BYTES <= length; i += Long.BYTES, k++) {
            longs.putLong(i, mix(seq * 0x9E3779B97F4A7C15L + k));
        }
        for (long last = mix(~seq); i < length; i++, last >>>= 8) {
            scratch[i] = (byte) last;
        }
        longs.putInt(12, checksum(length));
        MemorySegment.copy(scratch, 0, dst, JAVA_BYTE, 0, length);
    }

    private int checksum(int length) {
        crc.reset();
        crc.update(scratch, 0, 12);
        crc.update(scratch, HEADER, length - HEADER);
        return (int) crc.getValue();
    }

    /** splitmix64's finaliser: cheap, and every bit of the input reaches every bit of the output. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Readies the receiver for a stream of at most {@code limit} messages. */
    void start(long limit) {
        if (limit < 0 || limit > StreamOptions.MAX_MESSAGES) {
            throw new IllegalArgumentException("a stream of " + limit + " messages; at most "
                    + StreamOptions.MAX_MESSAGES + " are checked");
        }
        cap = limit;
        seen = new long[(int) ((limit + 63) >>> 6)];
        next = distinct = received = outOfOrder = duplicated = bad = bytes = 0;
    }

    /** Checks one data message as it arrived, {@code length} bytes of {@code m}. */
    void accept(MemorySegment m, int length) {
        received++;
        bytes += length;
        if (length < HEADER || length > scratch.length) {
            bad++;
            return;
        }
        MemorySegment.copy(m, JAVA_BYTE, 0, scratch, 0, length);
        long seq = longs.getLong(0);
        if (longs.getInt(8) != length || seq < 0 || seq >= cap || longs.getInt(12) != checksum(length)) {
            bad++;
            return;
        }
        int word = (int) (seq >>> 6);
        long bit = 1L << seq;
        if ((seen[word] & bit) != 0) {
            duplicated++;
            return;
        }
        seen[word] |= bit;
        distinct++;
        if (seq != next) {
            outOfOrder++;
        }
        next = seq + 1;
    }

    /** What never arrived of the {@code sent} messages the sender says it sent. */
    long missing(long sent) {
        return Math.max(0, sent - distinct);
    }

    /** The receiver's counts for a sender that sent {@code sent}, into {@code dst} (REPORT_BYTES). */
    void report(long sent, MemorySegment dst) {
        long[] v = {received, outOfOrder, duplicated, missing(sent), bad, bytes};
        for (int i = 0; i < v.length; i++) {
            dst.set(JAVA_LONG_UNALIGNED, (long) i * Long.BYTES, v[i]);
        }
    }

    /** A control message: its sequence number (START or END) and one argument. */
    static void control(MemorySegment dst, long kind, long value) {
        dst.set(JAVA_LONG_UNALIGNED, 0, kind);
        dst.set(JAVA_LONG_UNALIGNED, 8, value);
    }

    /** The receiver's report as read by the sender, with the verdict. */
    record Verdict(long sent, long received, long outOfOrder, long duplicated, long missing, long bad, long bytes) {
        static Verdict read(long sent, MemorySegment src) {
            long[] v = new long[6];
            for (int i = 0; i < v.length; i++) {
                v[i] = src.get(JAVA_LONG_UNALIGNED, (long) i * Long.BYTES);
            }
            return new Verdict(sent, v[0], v[1], v[2], v[3], v[4], v[5]);
        }

        boolean ok() {
            return received == sent && outOfOrder == 0 && duplicated == 0 && missing == 0 && bad == 0;
        }

        String summary() {
            return String.format(java.util.Locale.ROOT,
                    "sent %d, received %d, out of order %d, duplicated %d, missing %d, bad checksum %d: %s",
                    sent, received, outOfOrder, duplicated, missing, bad, ok() ? "OK" : "FAILED");
        }
    }
}
