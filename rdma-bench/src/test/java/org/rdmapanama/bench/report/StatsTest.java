package org.rdmapanama.bench.report;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

class StatsTest {

    @Test
    void medianOfAnOddCountIsTheMiddleValueWhateverTheOrder() {
        Stats s = Stats.of(9, 1, 5);
        assertEquals(new Stats(3, 5, 1, 9), s);
        assertEquals(new Stats(1, 7.5, 7.5, 7.5), Stats.of(7.5));
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheTwoMiddleValues() {
        assertEquals(new Stats(4, 3.5, 1, 10), Stats.of(10, 1, 4, 3));
        assertEquals(new Stats(2, 2.5, 2, 3), Stats.of(3, 2));
    }

    @Test
    void noValuesIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> Stats.of(List.of()));
    }

    @Test
    void nonNumericFieldsAreNotValues() {
        assertEquals(12.87, Stats.parse("12.87").orElseThrow());
        assertEquals(3, Stats.parse(" 3 ").orElseThrow());
        for (String bad : List.of("inf", "-inf", "Infinity", "NaN", "nan", "", "12.8.7", "n/a")) {
            assertFalse(Stats.parse(bad).isPresent(), bad);
        }
    }
}
