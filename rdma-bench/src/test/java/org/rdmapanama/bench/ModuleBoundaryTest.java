package org.rdmapanama.bench;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The boundary the module descriptors draw holds at run time: this module sees
 * the runtime's API, not the bindings or {@code internal}. Fails on a class
 * path, where every class shares the unnamed module and nothing is enforced.
 */
class ModuleBoundaryTest {
    private final Module bench = ModuleBoundaryTest.class.getModule();

    @Test
    void runsInItsModuleOnTheModulePath() {
        assertEquals("org.rdmapanama.bench", bench.getName());
    }

    @Test
    void onlyTheRuntimeReadsTheBindings() {
        Optional<Module> ffi = ModuleLayer.boot().findModule("org.rdmapanama.ffi");
        Module runtime = ModuleLayer.boot().findModule("org.rdmapanama").orElseThrow();
        assertTrue(ffi.isPresent());
        assertTrue(ffi.get().isExported("org.rdmapanama.ffi", runtime));
        assertFalse(ffi.get().isExported("org.rdmapanama.ffi", bench));
        assertFalse(runtime.isExported("org.rdmapanama.internal", bench));
        assertTrue(runtime.isExported("org.rdmapanama.device", bench));
    }

    @Test
    void reflectionCannotReachTheBindingsEither() throws Exception {
        Class<?> rdma = Class.forName("org.rdmapanama.ffi.Rdma");
        assertThrows(IllegalAccessException.class, () -> rdma.getMethod("ibv_get_device_list$address").invoke(null));
    }
}
