package org.rdmapanama.bench.rping;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** rping's command line without a device: getopt's grouping, and what a bad flag says. */
class RpingCliTest {
    private static String error(Runnable parse) {
        return assertThrows(IllegalArgumentException.class, parse::run).getMessage();
    }

    @Test
    void rpingGroupsFlagsAsGetopt() {
        RpingCommand.Options o = RpingCommand.parse(new String[] {"-cvV", "-C5", "-a", "10.77.0.1", "-S100", "-p", "7000"});
        assertFalse(o.server());
        assertTrue(o.verbose() && o.validate());
        assertEquals(5, o.count());
        assertEquals(100, o.size());
        assertEquals(7000, o.port());
        assertEquals("/10.77.0.1:7000", o.socketAddress().toString());
        o = RpingCommand.parse(new String[] {"-sdP"});
        assertTrue(o.server() && o.debug() && o.persistent());
        assertNull(RpingCommand.parse(new String[] {"-h"}));
        assertEquals("invalid size 22 for -S (valid range is 23 to 65535)",
                error(() -> RpingCommand.parse(new String[] {"-s", "-S", "22"})));
        assertEquals("invalid port 'http' for -p: not a number",
                error(() -> RpingCommand.parse(new String[] {"-s", "-p", "http"})));
        assertEquals("option -a needs a value", error(() -> RpingCommand.parse(new String[] {"-c", "-a"})));
        assertEquals("unexpected argument 'x'", error(() -> RpingCommand.parse(new String[] {"-s", "x"})));
        assertTrue(error(() -> RpingCommand.parse(new String[] {"-sq"})).startsWith("-q (a self-created"));
    }
}
