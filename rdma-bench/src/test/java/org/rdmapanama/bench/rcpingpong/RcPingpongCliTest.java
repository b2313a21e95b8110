package org.rdmapanama.bench.rcpingpong;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** rc_pingpong's picocli command line without a device: both spellings, and what a bad value says. */
class RcPingpongCliTest {
    private static String error(Runnable parse) {
        return assertThrows(IllegalArgumentException.class, parse::run).getMessage();
    }

    @Test
    void rcPingpongTakesBothSpellings() {
        RcPingpongCommand.Options o = RcPingpongCommand.parse(new String[] {"--port=7000", "-s", "0x800", "--chk", "-e",
                "-g", "1", "host"});
        assertEquals(7000, o.port);
        assertEquals(2048, o.size);
        assertTrue(o.validate && o.events);
        assertEquals(1, o.gidIndex);
        assertEquals("host", o.server);
        assertEquals("option -m: MTU must be 256, 512, 1024, 2048 or 4096, got 1000",
                error(() -> RcPingpongCommand.parse(new String[] {"-m", "1000"})));
        assertEquals("option --rx-depth must be 2..1048576, got 1",
                error(() -> RcPingpongCommand.parse(new String[] {"--rx-depth", "1"})));
        assertTrue(error(() -> RcPingpongCommand.parse(new String[] {"a", "b"})).startsWith("one server name at most"));
    }
}
