package org.rdmapanama.internal;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdmapanama.ffi.Rdma;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.SequenceLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Guards against ABI drift between the committed bindings and the rdma-core
 * headers on this machine. For every struct, union, typedef and constant in
 * headers/rdma_panama.includes it compiles a C program with gcc that prints
 * {@code sizeof}, {@code offsetof} and values, and compares them with the
 * generated layouts. Needs gcc and libibverbs-dev/librdmacm-dev, no device.
 */
class AbiTest {
    record Include(String kind, String name) {}

    static List<Include> includes;
    static Map<String, Long> fromC;

    @BeforeAll
    static void compileProbe() throws Exception {
        Path root = repoRoot();
        includes = new ArrayList<>();
        for (String line : Files.readAllLines(root.resolve("headers/rdma_panama.includes"))) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 2 && f[0].startsWith("--include-")) {
                includes.add(new Include(f[0].substring("--include-".length()), f[1]));
            }
        }
        Map<String, Long> expected = new LinkedHashMap<>();
        StringBuilder c = new StringBuilder("""
                #include <stddef.h>
                #include <stdio.h>
                #include "rdma_panama.h"
                #define SIZE(key, type) printf("%s %zu\\n", key, sizeof(type))
                #define OFF(key, type, path) printf("%s %zu\\n", key, offsetof(type, path))
                #define FSIZE(key, type, path) printf("%s %zu\\n", key, sizeof(((type *)0)->path))
                #define CONST(key, value) printf("%s %lld\\n", key, (long long)(value))
                int main(void) {
                """);
        for (Include inc : includes) {
            switch (inc.kind()) {
                case "struct", "union", "typedef" -> {
                    GroupLayout layout = generatedLayout(inc.name());
                    if (layout == null) {
                        continue; // a typedef of a typedef (e.g. __pthread_list_t) has no class of its own
                    }
                    String cType = inc.kind().equals("typedef") ? inc.name() : inc.kind() + " " + inc.name();
                    c.append("SIZE(\"sizeof ").append(inc.name()).append("\", ").append(cType).append(");\n");
                    expected.put("sizeof " + inc.name(), layout.byteSize());
                    members(layout, inc.name(), cType, "", 0, c, expected);
                }
                case "constant" -> {
                    c.append("CONST(\"const ").append(inc.name()).append("\", ").append(inc.name()).append(");\n");
                }
                default -> { }
            }
        }
        c.append("return 0;\n}\n");
        Path dir = Files.createTempDirectory("rdma-abi");
        Files.writeString(dir.resolve("abi_probe.c"), c);
        run(dir, "gcc", "-O0", "-w", "-I", root.resolve("headers").toString(), "-o", "abi_probe", "abi_probe.c");
        String out = run(dir, dir.resolve("abi_probe").toString());
        fromC = new TreeMap<>();
        for (String line : out.split("\n")) {
            int sp = line.lastIndexOf(' ');
            fromC.put(line.substring(0, sp), Long.parseLong(line.substring(sp + 1)));
        }
        layoutExpectations = expected;
    }

    static Map<String, Long> layoutExpectations;

    /** Walks a layout; anonymous members ($anon$...) add no name to the C path. */
    private static void members(GroupLayout group, String struct, String cType, String prefix, long base,
                                StringBuilder c, Map<String, Long> expected) {
        for (MemoryLayout m : group.memberLayouts()) {
            if (m instanceof PaddingLayout || m.name().isEmpty()) {
                continue;
            }
            String name = m.name().get();
            long offset = base + group.byteOffset(MemoryLayout.PathElement.groupElement(name));
            if (name.startsWith("$anon$")) {
                members((GroupLayout) m, struct, cType, prefix, offset, c, expected);
                continue;
            }
            String path = prefix + name;
            String key = struct + "." + path;
            c.append("OFF(\"offsetof ").append(key).append("\", ").append(cType).append(", ").append(path).append(");\n");
            c.append("FSIZE(\"sizeof ").append(key).append("\", ").append(cType).append(", ").append(path).append(");\n");
            expected.put("offsetof " + key, offset);
            expected.put("sizeof " + key, m.byteSize());
            if (m instanceof GroupLayout g && !(m instanceof SequenceLayout)) {
                members(g, struct, cType, path + ".", offset, c, expected);
            }
        }
    }

    private static GroupLayout generatedLayout(String name) throws ReflectiveOperationException {
        Class<?> cls;
        try {
            cls = Class.forName("org.rdmapanama.ffi." + name);
        } catch (ClassNotFoundException e) {
            return null;
        }
        return (GroupLayout) cls.getMethod("layout").invoke(null);
    }

    @Test
    void structSizesAndOffsetsMatchTheHeaders() {
        assertTrue(layoutExpectations.size() > 500, "expected hundreds of layout facts, got " + layoutExpectations.size());
        List<String> diff = new ArrayList<>();
        layoutExpectations.forEach((key, javaValue) -> {
            Long cValue = fromC.get(key);
            if (!javaValue.equals(cValue)) {
                diff.add(String.format("  %-60s generated %-6d C %s", key, javaValue, cValue));
            }
        });
        if (!diff.isEmpty()) {
            fail("generated layouts differ from the C headers (regenerate with scripts/generate-bindings):\n"
                    + String.join("\n", diff));
        }
    }

    @Test
    void constantsMatchTheHeaders() throws ReflectiveOperationException {
        List<String> diff = new ArrayList<>();
        int checked = 0;
        for (Include inc : includes) {
            if (!inc.kind().equals("constant")) {
                continue;
            }
            Number javaValue = (Number) Rdma.class.getMethod(inc.name()).invoke(null);
            Long cValue = fromC.get("const " + inc.name());
            checked++;
            if (cValue == null || javaValue.longValue() != cValue) {
                diff.add(String.format("  %-40s generated %-12d C %s", inc.name(), javaValue.longValue(), cValue));
            }
        }
        assertTrue(checked > 150, "expected the enum constants, checked " + checked);
        if (!diff.isEmpty()) {
            fail("generated constants differ from the C headers:\n" + String.join("\n", diff));
        }
    }

    @Test
    void everyIncludedFunctionResolvesInTheRuntimeLibraries() throws ReflectiveOperationException {
        List<String> missing = new ArrayList<>();
        for (Include inc : includes) {
            if (inc.kind().equals("function")) {
                MemorySegment address = (MemorySegment) Rdma.class.getMethod(inc.name() + "$address").invoke(null);
                if (address.equals(MemorySegment.NULL)) {
                    missing.add(inc.name());
                }
            }
        }
        assertEquals(List.of(), missing, "functions not found in libibverbs.so.1/librdmacm.so.1");
    }

    @Test
    void theInlineVerbsAreReachedThroughContextOps() {
        // ibv_post_send & co. are static inline: the runtime calls them through
        // these function-pointer slots, so their offsets must be right.
        for (String slot : List.of("poll_cq", "req_notify_cq", "post_send", "post_recv", "post_srq_recv")) {
            assertTrue(fromC.containsKey("offsetof ibv_context_ops." + slot), slot);
        }
        assertFalse(fromC.isEmpty());
    }

    static Path repoRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve("headers"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("no headers/ above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process proc = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] out = proc.getInputStream().readAllBytes();
        if (!proc.waitFor(60, TimeUnit.SECONDS) || proc.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n"
                    + new String(out, StandardCharsets.UTF_8));
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
