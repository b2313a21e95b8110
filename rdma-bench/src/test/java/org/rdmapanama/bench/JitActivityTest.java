package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JitActivityTest {
    @Test
    void readsUtimePlusStimeOfCompilerThreadsOnly() {
        String c2 = "1234 (C2 CompilerThre) S 1 1 1 0 -1 4194368 100 0 0 0 250 17 0 0 20 0 30 0 100 0 0";
        assertEquals(267, JitActivity.compilerTicks(c2));
        assertEquals(-1, JitActivity.compilerTicks("1235 (java) R 1 1 1 0 -1 0 0 0 0 0 999 1 0 0"));
        // A thread name may hold ") ": the fields start after the last one.
        assertEquals(-1, JitActivity.compilerTicks("9 (x) 1 2 3) S 1 1 1 0 -1 0 0 0 0 0 3 4 0 0"));
        assertEquals(7, JitActivity.compilerTicks("9 (C1 CompilerThre) S 1 1 1 0 -1 0 0 0 0 0 3 4 0 0"));
        assertEquals(-1, JitActivity.compilerTicks("9 (C1 CompilerThre")); // truncated line
        assertEquals(-1, JitActivity.compilerTicks("9 (C1 CompilerThre) S 1 1")); // too few fields
        assertEquals(-1, JitActivity.compilerTicks("9 (C1 CompilerThre)")); // nothing after the name
        assertEquals(-1, JitActivity.compilerTicks("9 (C1 CompilerThre) S 1 1 1 0 -1 0 0 0 0 0 x 4 0 0"));
    }

    @Test
    void findsThisJvmsCompilerThreads() {
        assertTrue(JitActivity.compilerThreadTicks() >= 0, "/proc/self/task shows no HotSpot compiler thread");
    }
}
