package org.rdmapanama;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Holds the layers by reading the main sources of both modules: which package
 * may name which, so that a break shows in a host build, not in a review.
 * Names count wherever they appear in code (imports and fully qualified uses);
 * comments do not count. Test sources are free to reach across layers.
 */
class LayeringTest {
    /** Each runtime layer and the runtime packages it may name (its own always). */
    static final Map<String, Set<String>> MAY_USE = Map.of(
            "ffi", Set.of(),
            "internal", Set.of("ffi", "error"),
            "error", Set.of(),
            "device", Set.of("error", "internal"),
            "verbs", Set.of("error", "device", "internal"),
            "cm", Set.of("error", "device", "internal", "verbs"),
            "failover", Set.of("error", "device", "verbs", "cm"),
            "channel", Set.of("error", "device", "verbs", "cm"));
    /** rdma-bench is a user of the public API. */
    static final Set<String> BENCH_MAY_USE = Set.of("error", "device", "verbs", "cm", "failover", "channel", "bench");

    static final Pattern NAME = Pattern.compile("\\borg\\.rdmapanama\\.([a-z]\\w*)");
    /** A runtime class named in a string: a layer reached by reflection, out of the compiler's sight. */
    static final Pattern CLASS_IN_STRING = Pattern.compile("\"org\\.rdmapanama\\.[a-z][\\w.]*\\.[A-Z]\\w*\"");

    @Test
    void eachRuntimeLayerNamesOnlyTheLayersBelowIt() {
        List<String> breaks = new ArrayList<>();
        for (Path src : sources(root().resolve("rdma-panama/src/main/java"))) {
            String layer = layerOf(src);
            if (!MAY_USE.containsKey(layer)) {
                breaks.add(src + " is in no layer (package " + packageOf(src) + ")");
                continue;
            }
            check(src, layer, MAY_USE.get(layer), breaks);
        }
        assertEquals(List.of(), breaks, "layering breaks in rdma-panama");
    }

    @Test
    void benchUsesThePublicApiOnly() {
        List<String> breaks = new ArrayList<>();
        for (Path src : sources(root().resolve("rdma-bench/src/main/java"))) {
            check(src, "bench", BENCH_MAY_USE, breaks);
        }
        assertEquals(List.of(), breaks, "layering breaks in rdma-bench");
    }

    @Test
    void theCheckSeesABreakInCodeButNotInAComment() {
        List<String> breaks = new ArrayList<>();
        checkText(Path.of("X.java"), "verbs", MAY_USE.get("verbs"),
                "package org.rdmapanama.verbs;\n// see org.rdmapanama.cm.RdmaConnection\n/** {@link org.rdmapanama.failover.X} */\n"
                        + "import org.rdmapanama.device.Gid;\nclass X { Object o = org.rdmapanama.cm.CmId.class;"
                        + " String s = \"org.rdmapanama.verbs.QueuePair\"; }\n", breaks);
        assertEquals(2, breaks.size(), breaks.toString());
        assertTrue(breaks.get(0).contains("names org.rdmapanama.cm"), breaks.toString());
        assertTrue(breaks.get(1).contains("class name in a string"), breaks.toString());
    }

    private static void check(Path src, String layer, Set<String> mayUse, List<String> breaks) {
        try {
            checkText(src, layer, mayUse, Files.readString(src), breaks);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void checkText(Path src, String layer, Set<String> mayUse, String text, List<String> breaks) {
        String code = stripComments(text);
        Matcher m = NAME.matcher(code.replaceAll("\"(?:\\\\.|[^\"\\\\])*\"", "\"\""));
        Set<String> seen = new java.util.TreeSet<>();
        while (m.find()) {
            String used = m.group(1);
            if (!used.equals(layer) && !mayUse.contains(used) && seen.add(used)) {
                breaks.add(src + " (" + layer + ") names org.rdmapanama." + used);
            }
        }
        Matcher s = CLASS_IN_STRING.matcher(code);
        if (s.find()) {
            breaks.add(src + " (" + layer + ") has a class name in a string: " + s.group());
        }
    }

    /** Drops comments; strings survive (a class name in one is itself a break). */
    static String stripComments(String text) {
        StringBuilder out = new StringBuilder(text.length());
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '"') {
                int j = i + 1;
                while (j < text.length() && text.charAt(j) != '"' && text.charAt(j) != '\n') {
                    j += text.charAt(j) == '\\' ? 2 : 1;
                }
                out.append(text, i, Math.min(j + 1, text.length()));
                i = j + 1;
            } else if (text.startsWith("//", i)) {
                i = text.indexOf('\n', i) < 0 ? text.length() : text.indexOf('\n', i);
            } else if (text.startsWith("/*", i)) {
                int end = text.indexOf("*/", i + 2);
                i = end < 0 ? text.length() : end + 2;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static String packageOf(Path src) {
        try (Stream<String> lines = Files.lines(src)) {
            return lines.filter(l -> l.startsWith("package ")).findFirst()
                    .map(l -> l.substring(8, l.indexOf(';'))).orElse("");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The package's first segment below org.rdmapanama: the layer. */
    private static String layerOf(Path src) {
        String pkg = packageOf(src);
        String rest = pkg.startsWith("org.rdmapanama.") ? pkg.substring("org.rdmapanama.".length()) : "";
        return rest.contains(".") ? rest.substring(0, rest.indexOf('.')) : rest;
    }

    private static List<Path> sources(Path dir) {
        assertTrue(Files.isDirectory(dir), dir + " is missing");
        try (Stream<Path> files = Files.walk(dir)) {
            List<Path> list = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.getFileName().toString().equals("module-info.java")).sorted().toList();
            assertTrue(list.size() > 10, "only " + list.size() + " sources under " + dir);
            return list;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The repository root: Surefire runs in the module's folder. */
    static Path root() {
        Path here = Path.of("").toAbsolutePath();
        while (here != null && !Files.isDirectory(here.resolve("rdma-bench/src/main/java"))) {
            here = here.getParent();
        }
        assertTrue(here != null, "no repository root above " + Path.of("").toAbsolutePath());
        return here;
    }
}
