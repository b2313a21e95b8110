package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** getopt_long's reading of a command line, as perftest's tools see it. */
class GetoptTest {
    private final List<String> seen = new ArrayList<>();

    private Getopt getopt() {
        return new Getopt()
                .flag(() -> seen.add("a"), "-a", "--all")
                .flag(() -> seen.add("R"), "-R", "--rdma_cm")
                .value((typed, v) -> seen.add(typed + "=" + v), "-s", "--size")
                .flag(() -> seen.add("sig"), "--signal");
    }

    private String error(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> getopt().parse(args)).getMessage();
    }

    @Test
    void groupedFlagsAttachedValuesAndOperandsAnywhere() {
        List<String> operands = getopt().parse(new String[] {"host", "-aR", "-s64", "--size", "8", "-aRs", "16",
                "--size=32", "-s", "-1", "second"});
        assertEquals(List.of("a", "R", "-s=64", "--size=8", "a", "R", "-s=16", "--size=32", "-s=-1"), seen,
                "a value that looks like an option is still the value, as with getopt");
        assertEquals(List.of("host", "second"), operands);
    }

    @Test
    void doubleDashEndsTheOptionsAndADashAloneIsAnOperand() {
        assertEquals(List.of("-", "-a", "--size"), getopt().parse(new String[] {"-a", "-", "--", "-a", "--size"}));
        assertEquals(List.of("a"), seen);
    }

    @Test
    void errorsNameTheOptionAsTyped() {
        assertEquals("unknown option '--bogus'", error("--bogus=1"));
        assertEquals("unknown option '-Z'", error("-aZ"));
        assertEquals("option -s needs a value", error("-a", "-s"));
        assertEquals("option --size needs a value", error("--size"));
        assertEquals("option -R takes no value", error("-R=1"));
        assertEquals("option --rdma_cm takes no value", error("--rdma_cm=yes"));
    }

    @Test
    void longNamesShortenToAnyPrefixThatNamesOneOption() {
        getopt().parse(new String[] {"--al", "--rdma", "--siz=4", "--siz", "8", "--sig"});
        assertEquals(List.of("a", "R", "--size=4", "--size=8", "sig"), seen);
        assertEquals("option '--s' is ambiguous: --signal, --size", error("--s", "1"));
    }

    @Test
    void anEqualsSignAfterAShortOptionIsExplained() {
        assertEquals("option -s takes its value as -s 64 or -s64, not -s=64", error("-s=64"));
        assertEquals("option -s takes its value as -s 64 or -s64, not -s=64", error("-Rs=64"));
    }

    @Test
    void numbersReadLikeStrtol() {
        assertEquals(16, Getopt.number("-s", "0x10", 1, 100));
        assertEquals(8, Getopt.number("-s", "010", 1, 100));
        assertEquals("option -s needs a number, got '=64'",
                assertThrows(IllegalArgumentException.class, () -> Getopt.number("-s", "=64", 1, 100)).getMessage());
        assertEquals("option --size must be 1..100, got 0",
                assertThrows(IllegalArgumentException.class, () -> Getopt.number("--size", "0", 1, 100)).getMessage());
    }
}
