package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The picocli command lines without a device: number formats, spellings, grouping, and what a bad flag says. */
class CliParsersTest {
    private static String error(Runnable parse) {
        return assertThrows(IllegalArgumentException.class, parse::run).getMessage();
    }

    @Test
    void perftestNumbersReadLikeStrtol() {
        PerftestOptions o = PerftestCliTest.parse(PerftestOptions.Test.WRITE_BW, "-s", "0x1000", "--iters=010", "-t020");
        assertEquals(4096, o.size);
        assertEquals(8, o.iters, "a leading 0 is octal, as strtol(v, NULL, 0)");
        assertEquals(8, o.txDepth, "-t 020 is 16, then at most -n");
        assertEquals(64, PerftestCliTest.parse(PerftestOptions.Test.WRITE_LAT, "-s64").size);
        assertTrue(PerftestCliTest.parse(PerftestOptions.Test.WRITE_LAT, "-aR").rdmaCm, "grouped flags");
    }

    @Test
    void perftestErrorsNameTheFlagAsTyped() {
        PerftestOptions.Test t = PerftestOptions.Test.WRITE_LAT;
        assertEquals("option --size needs a number, got 'x'", error(() -> PerftestCliTest.parse(t, "--size=x")));
        assertEquals("option -s must be 1..8388608, got 0", error(() -> PerftestCliTest.parse(t, "-s", "0")));
        assertEquals("option -n needs a value", error(() -> PerftestCliTest.parse(t, "-n")));
        assertEquals("option --iters needs a value", error(() -> PerftestCliTest.parse(t, "--iters")));
        assertEquals("option -R takes no value", error(() -> PerftestCliTest.parse(t, "-R=1")));
        assertEquals("unknown option '--bogus'", error(() -> PerftestCliTest.parse(t, "--bogus")));
        assertEquals("option -d needs a non-empty value", error(() -> PerftestCliTest.parse(t, "-d", "")));
        assertTrue(error(() -> PerftestCliTest.parse(t, "--transport", "x")).startsWith("option --transport: "));
        assertEquals("option -A is for atomic_lat only", error(() -> PerftestCliTest.parse(t, "-A", "CMP_AND_SWAP")));
        assertFalse(PerftestCliTest.parse(PerftestOptions.Test.ATOMIC_LAT, "--atomic_type=CMP_AND_SWAP").fetchAndAdd);
        assertEquals(7, PerftestCliTest.parse(t, "-s", "3", "-s", "7").size, "the last of a repeated flag wins");
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

    @Test
    void scaleUsageErrorsExit2AndNameTheFlag() {
        MainTest.Result r = MainTest.run("scale", "client", "-a");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("rdma-bench scale: option -a needs a value"), r.err());
        r = MainTest.run("scale", "client", "-a", "10.77.0.1", "-c", "0");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("rdma-bench scale: option -c must be 1..1000000, got 0"), r.err());
        r = MainTest.run("scale", "sideways", "-a", "10.77.0.1");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("unknown mode 'sideways'"), r.err());
        r = MainTest.run("scale", "client");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("-a ADDR is required"), r.err());
        assertEquals(2, MainTest.run("scale").status());
        r = MainTest.run("scale", "-h");
        assertEquals(0, r.status());
        assertTrue(r.out().startsWith("usage: rdma-bench scale"), r.out());
    }
}
