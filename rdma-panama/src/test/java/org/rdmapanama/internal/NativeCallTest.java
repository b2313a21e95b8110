package org.rdmapanama.internal;

import org.junit.jupiter.api.Test;
import org.rdmapanama.ffi.Rdma;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The control-path calls write their C signatures by hand (so that declaring
 * one links nothing): each must equal the descriptor jextract generated from
 * the headers, or the downcall would pass or read the wrong types. No device.
 */
class NativeCallTest {
    private static List<NativeCall> declared() throws IllegalAccessException {
        List<NativeCall> calls = new ArrayList<>();
        for (Class<?> holder : List.of(Verbs.Calls.class, Cm.class)) {
            for (Field f : holder.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) && f.getType() == NativeCall.class) {
                    calls.add((NativeCall) f.get(null));
                }
            }
        }
        return calls;
    }

    @Test
    void everyDescriptorIsTheGeneratedOne() throws Exception {
        List<NativeCall> calls = declared();
        assertTrue(calls.size() >= 36, "found only " + calls.size() + " declared calls");
        for (NativeCall c : calls) {
            FunctionDescriptor generated = (FunctionDescriptor) Rdma.class.getMethod(c.name() + "$descriptor").invoke(null);
            assertEquals(generated, c.descriptor(), c.name());
        }
    }

    @Test
    void everySymbolIsInTheLibraries() throws Exception {
        for (NativeCall c : declared()) {
            assertEquals(Rdma.class.getMethod(c.name() + "$address").invoke(null), NativeLibraries.symbol(c.name()),
                    c.name());
        }
    }

    @Test
    void timedCallsAreCountedAndListed() throws Exception {
        String before = NativeCall.times();
        NativeCall.timeCalls(true);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(JAVA_INT);
            Verbs.freeDeviceList(Verbs.getDeviceList(count)); // NULL and ENOSYS where the kernel has no RDMA: timed too
            Verbs.freeDeviceList(Verbs.getDeviceList(count));
        } finally {
            NativeCall.timeCalls(false);
        }
        String after = NativeCall.times();
        assertEquals(calls(before, "ibv_get_device_list") + 2, calls(after, "ibv_get_device_list"), after);
        try (Arena a = Arena.ofConfined()) {
            Verbs.freeDeviceList(Verbs.getDeviceList(a.allocate(JAVA_INT)));
        }
        assertEquals(after, NativeCall.times(), "a call made while not timed is not counted");
    }

    /** The calls column of {@code name}'s row in a {@link NativeCall#times()} table, 0 without a row. */
    private static long calls(String table, String name) {
        for (String line : table.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 7 && f[1].equals(name)) {
                return Long.parseLong(f[2]);
            }
        }
        return 0;
    }
}
