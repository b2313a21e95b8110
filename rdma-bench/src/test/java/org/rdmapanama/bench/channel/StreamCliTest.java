package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.BenchRun;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** channel_stream's command line: sizes and ranges, -n against -D, usage errors exit 2 and name the flag. */
class StreamCliTest {
    private static String error(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> StreamOptions.parse(args)).getMessage();
    }

    @Test
    void defaultsAreAMixedAndARendezvousStreamOfFiveSeconds() {
        StreamOptions o = StreamOptions.parse(new String[] {"10.78.0.2"});
        assertEquals(List.of(new StreamOptions.Spec(64, 65536), new StreamOptions.Spec(65536, 65536)), o.specs);
        assertEquals(5, o.seconds);
        assertEquals(-1, o.iters);
        assertEquals("10.78.0.2", o.server);
        assertEquals(65536, o.largest());
    }

    @Test
    void sizesAreBytesOrRanges() {
        StreamOptions o = StreamOptions.parse(new String[] {"-s", "16-1024,4096", "-n", "100", "-d", "siw0"});
        assertEquals(List.of(new StreamOptions.Spec(16, 1024), new StreamOptions.Spec(4096, 4096)), o.specs);
        assertEquals("16-1024", o.specs.get(0).toString());
        assertEquals(100, o.iters);
        assertEquals(-1, o.seconds);
        assertNull(o.server);
        assertEquals("siw0", o.device);
    }

    @Test
    void badInputIsNamed() {
        assertTrue(error("-s", "8").contains("-s"), error("-s", "8"));
        assertTrue(error("-s", "4096-64").contains("MIN below MAX"), error("-s", "4096-64"));
        assertTrue(error("-s", "64,").contains("-s"), error("-s", "64,"));
        assertEquals("-n and -D exclude each other", error("-n", "10", "-D", "5"));
        assertTrue(error("--slot", "1000").contains("power of two"));
        assertTrue(error("a", "b").contains("one operand at most"));
    }

    @Test
    void throughMainUsageErrorsExit2AndHelpExits0() {
        BenchRun r = BenchRun.of("channel_stream", "-s", "64-x");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("rdma-bench channel_stream: "), r.err());
        assertTrue(r.err().contains("usage: rdma-bench channel_stream"), r.err());
        r = BenchRun.of("channel_stream", "-h");
        assertEquals(0, r.status());
        assertTrue(r.out().startsWith("usage: rdma-bench channel_stream"), r.out());
    }
}
