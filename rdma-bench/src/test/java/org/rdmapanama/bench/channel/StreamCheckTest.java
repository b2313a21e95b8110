package org.rdmapanama.bench.channel;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The checked stream's receiver counts each way a stream can go wrong, and passes a whole one. */
class StreamCheckTest {
    private final StreamCheck sender = new StreamCheck(1 << 16);
    private final StreamCheck receiver = new StreamCheck(1 << 16);
    private final MemorySegment report = Arena.ofAuto().allocate(StreamCheck.REPORT_BYTES);

    private MemorySegment message(long seq, int length) {
        MemorySegment m = Arena.ofAuto().allocate(length);
        sender.fill(seq, length, m);
        return m;
    }

    private StreamCheck.Verdict verdict(long sent) {
        receiver.report(sent, report);
        return StreamCheck.Verdict.read(sent, report);
    }

    @Test
    void aWholeMixedStreamPasses() {
        StreamOptions.Spec spec = new StreamOptions.Spec(64, 65536);
        receiver.start(1000);
        int small = 0, large = 0;
        for (long seq = 0; seq < 1000; seq++) {
            int len = ChannelStreamCommand.Driver.size(spec, seq);
            assertTrue(len >= 64 && len <= 65536, "size " + len);
            small += len <= 8192 ? 1 : 0;
            large += len > 8192 ? 1 : 0;
            receiver.accept(message(seq, len), len);
        }
        StreamCheck.Verdict v = verdict(1000);
        assertTrue(v.ok(), v.summary());
        assertTrue(small > 100 && large > 100, small + " eager-sized, " + large + " larger");
    }

    @Test
    void lossDuplicationReorderAndCorruptionAreCounted() {
        receiver.start(10);
        receiver.accept(message(0, 64), 64);
        receiver.accept(message(2, 100), 100);   // 1 lost, 2 out of order
        receiver.accept(message(2, 100), 100);   // duplicated
        MemorySegment bad = message(3, 4096);
        bad.set(JAVA_BYTE, 2000, (byte) (bad.get(JAVA_BYTE, 2000) ^ 1));
        receiver.accept(bad, 4096);              // one bit flipped
        receiver.accept(message(4, 4096), 4000); // truncated
        receiver.accept(message(5, 64), 64);     // out of order: 3 and 4 were bad
        StreamCheck.Verdict v = verdict(6);
        assertFalse(v.ok());
        assertEquals(6, v.received());
        assertEquals(2, v.outOfOrder());
        assertEquals(1, v.duplicated());
        assertEquals(3, v.missing());
        assertEquals(2, v.bad());
        assertEquals("sent 6, received 6, out of order 2, duplicated 1, missing 3, bad checksum 2: FAILED", v.summary());
    }

    @Test
    void theContentDependsOnTheSequenceNumber() {
        MemorySegment a = message(7, 256);
        MemorySegment b = message(8, 256);
        assertTrue(a.asSlice(16).mismatch(b.asSlice(16)) >= 0);
        assertEquals(-1, a.mismatch(message(7, 256)));
    }
}
