package org.rdmapanama.bench.channel;

import org.rdmapanama.bench.BenchRun;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** channel_watch's command line: keepalive on by default, 0 turns it off, bad input exits 2 naming the flag. */
class WatchCliTest {
    @Test
    void keepaliveIsOnByDefaultAndZeroTurnsItOff() {
        ChannelWatchCommand.Options o = ChannelWatchCommand.parse(new String[] {"10.78.0.2"});
        assertEquals("10.78.0.2", o.server);
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), o.channelOptions().keepaliveNanos());
        assertEquals(60, o.limitSeconds);
        o = ChannelWatchCommand.parse(new String[] {"--keepalive", "0", "--limit", "5", "-d", "siw0"});
        assertNull(o.server);
        assertEquals(0, o.channelOptions().keepaliveNanos());
        assertEquals(5, o.limitSeconds);
        assertEquals("siw0", o.device);
    }

    @Test
    void badInputIsNamed() {
        String e = assertThrows(IllegalArgumentException.class,
                () -> ChannelWatchCommand.parse(new String[] {"--limit", "0"})).getMessage();
        assertTrue(e.contains("--limit"), e);
        BenchRun r = BenchRun.of("channel_watch", "a", "b");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("one operand at most"), r.err());
        r = BenchRun.of("channel_watch", "-h");
        assertEquals(0, r.status());
        assertTrue(r.out().startsWith("usage: rdma-bench channel_watch"), r.out());
    }
}
