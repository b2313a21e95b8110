package org.rdmapanama.bench.perftest;

import java.nio.ByteBuffer;

/**
 * The 20-byte parameter message two rdma-bench perftest ends exchange, right after perftest's own
 * version, system-data and MTU blocks, once both ends know the other is rdma-bench
 * ({@link PerftestExchange}): on the TCP exchange, or with {@code -R} on the rdma_cm one. Native
 * perftest never sees it (it checks nothing but the version, so against it a mismatch shows as a
 * stall, which our loops time out), and the QP addresses travel in perftest's own handshakes
 * ({@link PerftestKeys}), so it carries only what both ends must agree on. Big-endian:
 * <pre>
 *  0 magic "PT"  2 version  3 test  4 flags  5 QPs (-q)  6 zero(16)
 *  8 size(32)   12 iters or duration(32)   16 buffer length(32)
 * </pre>
 * Decoding checks every field and that both ends run the same test with the
 * same size, count and mode; anything else is a one-line error, not a hang.
 */
record PerftestWire(int test, int flags, int qps, int size, int iters, long length) {
    static final int SIZE = 20;
    static final short MAGIC = 0x5054; // "PT"
    // 2: warm-up rounds end by a vote; 3: after perftest 4.5's TCP exchange; 4: byte 5 is -q (was 0);
    // 5: no QP address (the handshakes carry it)
    static final int VERSION = 5;
    static final int FLAG_ALL = 1, FLAG_DURATION = 2, FLAG_RDMA_CM = 4, FLAG_FETCH_ADD = 8, FLAG_WARMUP = 16;

    /** This side's parameters; {@code length}: the buffer the peer may use, [S, 2S) and the control area. */
    static PerftestWire of(PerftestOptions o, long length) {
        return new PerftestWire(o.test.ordinal(), flagsOf(o), o.numQps, o.maxSize(),
                o.duration != null ? o.duration : o.iters, length);
    }

    static int flagsOf(PerftestOptions o) {
        return (o.allSizes ? FLAG_ALL : 0) | (o.duration != null ? FLAG_DURATION : 0) | (o.rdmaCm ? FLAG_RDMA_CM : 0)
                | (o.test.verb == PerftestOptions.Verb.ATOMIC && o.fetchAndAdd ? FLAG_FETCH_ADD : 0)
                | (o.warmup() ? FLAG_WARMUP : 0);
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.putShort(MAGIC).put((byte) VERSION).put((byte) test).put((byte) flags).put((byte) qps).putShort((short) 0);
        b.putInt(size).putInt(iters).putInt((int) length);
        return b.array();
    }

    /**
     * Parses and checks a peer's message against what this side runs.
     * Trailing bytes (IB CM zero-pads private data) must be zero.
     *
     * @param minLength the remote buffer this side needs
     * @throws IllegalArgumentException naming the first field that is wrong
     */
    static PerftestWire decode(byte[] data, PerftestWire mine, long minLength) {
        if (data.length < SIZE) {
            throw new IllegalArgumentException("peer's setup message has " + data.length + " bytes, expected " + SIZE
                    + " (is the peer rdma-bench with the same subcommand?)");
        }
        for (int i = SIZE; i < data.length; i++) {
            if (data[i] != 0) {
                throw new IllegalArgumentException("peer's setup message has " + data.length + " bytes with data after byte "
                        + SIZE);
            }
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        short magic = b.getShort();
        int version = b.get() & 0xff;
        int test = b.get() & 0xff;
        int flags = b.get() & 0xff;
        int qps = b.get() & 0xff;
        b.getShort(); // zero
        int size = b.getInt();
        int iters = b.getInt();
        long length = Integer.toUnsignedLong(b.getInt());
        if (magic != MAGIC || version != VERSION) {
            throw new IllegalArgumentException("peer's setup message is not rdma-bench perftest version " + VERSION
                    + " (magic 0x" + Integer.toHexString(magic & 0xffff) + ", version " + version + ")");
        }
        PerftestOptions.Test[] tests = PerftestOptions.Test.values();
        if (test != mine.test) {
            throw new IllegalArgumentException("peer runs " + (test < tests.length ? tests[test].command : "test #" + test)
                    + ", this side " + tests[mine.test].command);
        }
        if (flags != mine.flags) {
            throw new IllegalArgumentException("peer's mode differs (-a, -D, -R, -A or --warmup=0/--no-warmup): peer flags " + flags
                    + ", here " + mine.flags);
        }
        if (qps != mine.qps) {
            throw new IllegalArgumentException("peer runs " + qps + " QPs, here " + mine.qps
                    + ": run both sides with the same -q");
        }
        if (size != mine.size) {
            throw new IllegalArgumentException("peer's message size is " + size + ", here " + mine.size
                    + ": run both sides with the same -s/-a");
        }
        if (iters != mine.iters) {
            throw new IllegalArgumentException("peer's " + ((flags & FLAG_DURATION) != 0 ? "duration" : "iteration count")
                    + " is " + iters + ", here " + mine.iters + ": run both sides with the same -n/-D");
        }
        if (length < minLength) {
            throw new IllegalArgumentException("peer's buffer has " + length + " bytes, " + minLength + " needed");
        }
        return new PerftestWire(test, flags, qps, size, iters, length);
    }
}
