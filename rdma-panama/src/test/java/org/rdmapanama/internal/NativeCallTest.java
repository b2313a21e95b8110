package org.rdmapanama.internal;

import org.junit.jupiter.api.Test;
import org.rdmapanama.ffi.Rdma;

import java.lang.foreign.FunctionDescriptor;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

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
}
