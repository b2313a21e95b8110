package org.rdmapanama.bench.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The TCP benchmarks' framing: a message is its length (u32, 8 bytes or more) followed by that many bytes, of
 * which the first 8 are its head: the operation ({@link org.rdmapanama.bench.message.MessageBench#ECHO} ...) in
 * the first 4, or a count in all 8 (big-endian, java.nio's order). The rest is payload that neither side
 * fills or reads, as the channel benchmarks do not: it streams through a connection's buffers, so that a
 * 4 MiB message needs no 4 MiB buffer. Nothing here allocates after construction.
 */
final class Frames {
    private Frames() {}

    /** Bytes before the payload: the length and the head. */
    static final int HEADER = 12;
    static final int MAX_LENGTH = 1 << 30;

    /** The head of an operation message. */
    static long head(int op) {
        return (long) op << 32;
    }

    static int op(long head) {
        return (int) (head >>> 32);
    }

    /** Reads messages out of a connection's input buffer, one at a time, across reads. */
    static final class Reader {
        private boolean inMessage;
        private long rest;
        private int length;
        private long head;

        /**
         * Consumes from {@code in} (ready to get) what it can of the current message; true once a whole
         * message has been consumed ({@link #length()}, {@link #head()} are then its).
         *
         * @throws IOException for a length the peer cannot have meant
         */
        boolean next(ByteBuffer in) throws IOException {
            if (!inMessage) {
                if (in.remaining() < HEADER) {
                    return false;
                }
                int len = in.getInt();
                if (len < 8 || len > MAX_LENGTH) {
                    throw new IOException("the peer sent a message of " + Integer.toUnsignedString(len)
                            + " bytes (8.." + MAX_LENGTH + "): is it a " + "tcp_ benchmark of this build?");
                }
                head = in.getLong();
                length = len;
                rest = len - 8L;
                inMessage = true;
            }
            int n = (int) Math.min(rest, in.remaining());
            in.position(in.position() + n);
            rest -= n;
            if (rest > 0) {
                return false;
            }
            inMessage = false;
            return true;
        }

        /** Whether no message is partly read: the peer may close here. */
        boolean atBoundary() {
            return !inMessage;
        }

        int length() {
            return length;
        }

        long head() {
            return head;
        }
    }

    /**
     * Messages waiting to go out, as runs of equal ones ({@code count} messages of one length and head), put
     * into a connection's output buffer as room allows.
     */
    static final class Writer {
        private static final int RUNS = 64;
        private final int[] lengths = new int[RUNS];
        private final long[] heads = new long[RUNS];
        private final long[] counts = new long[RUNS];
        private int first;
        private int runs;
        /** Bytes of the message being put that are still to go into the buffer. */
        private long rest;

        /** Whether {@link #add} is sure to take one more message. */
        boolean hasRoom() {
            return runs < RUNS;
        }

        /** Queues {@code count} messages; false (nothing queued) when every run is taken by others. */
        boolean add(int length, long head, long count) {
            int last = (first + runs - 1) % RUNS;
            if (runs > 0 && lengths[last] == length && heads[last] == head) {
                counts[last] += count;
                return true;
            }
            if (runs == RUNS) {
                return false;
            }
            int at = (first + runs) % RUNS;
            lengths[at] = length;
            heads[at] = head;
            counts[at] = count;
            runs++;
            return true;
        }

        /** Whether everything queued went into the buffer. */
        boolean idle() {
            return runs == 0 && rest == 0;
        }

        /** Puts what fits into {@code out} (ready to put): lengths and heads, and payload left as the buffer held it. */
        void fill(ByteBuffer out) {
            while (true) {
                if (rest > 0) {
                    int n = (int) Math.min(rest, out.remaining());
                    out.position(out.position() + n);
                    rest -= n;
                    if (rest > 0) {
                        return;
                    }
                }
                if (runs == 0 || out.remaining() < HEADER) {
                    return;
                }
                out.putInt(lengths[first]).putLong(heads[first]);
                rest = lengths[first] - 8L;
                if (--counts[first] == 0) {
                    first = (first + 1) % RUNS;
                    runs--;
                }
            }
        }
    }
}
