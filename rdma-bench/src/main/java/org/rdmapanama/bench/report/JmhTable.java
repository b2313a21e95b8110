package org.rdmapanama.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * scripts/jmh-vs-c's table: JMH's score and allocation per op (jmh.csv, written with -rf csv)
 * against the median of the C loop's rounds, lines "NAME NS_PER_OP": those that bracketed that
 * benchmark's own JMH run (c/BENCHMARK.txt), or, in results from before that layout, the rounds
 * before and after the whole JMH run (c-before.txt and c-after.txt).
 */
public final class JmhTable {
    private JmhTable() {}

    /**
     * A JMH benchmark named {@code NAME} + this suffix is the same call through the
     * thread-confined data path: its C twin is {@code NAME}'s.
     */
    static final String CONFINED = "Confined";

    /** Likewise: the same call with its target a constant the JIT sees. */
    static final String BOUND = "Bound";

    /**
     * One benchmark; {@code c} is null when the C loop has no such line, javaNs NaN when JMH did
     * not run it, javaError JMH's 99.9 % error (NaN if absent), allocBytes NaN without -prof gc.
     */
    public record Row(String benchmark, double javaNs, double javaError, Stats c, double allocBytes) {
        public double ratio() {
            return c == null ? Double.NaN : javaNs / c.median();
        }
    }

    public static final List<String> C_FILES = List.of("c-before.txt", "c-after.txt");

    public static List<Row> load(Path dir) throws IOException {
        Csv jmh = Csv.read(dir.resolve("jmh.csv"));
        jmh.require("Benchmark", "Score");
        Path perBenchmark = dir.resolve("c");
        boolean bracketed = Files.isDirectory(perBenchmark);
        Map<String, List<Double>> cRounds = new LinkedHashMap<>();
        if (!bracketed) {
            for (String f : C_FILES) {
                Path p = dir.resolve(f);
                if (!Files.exists(p)) throw new IOException(p + " is missing");
                readC(p, cRounds);
            }
        }
        Map<String, Double> alloc = new LinkedHashMap<>();
        Map<String, Double> score = new LinkedHashMap<>();
        Map<String, Double> error = new LinkedHashMap<>();
        for (Map<String, String> r : jmh.rows()) {
            String name = r.get("Benchmark");
            OptionalDouble v = Stats.parse(r.get("Score"));
            if (name.endsWith(":gc.alloc.rate.norm")) {
                alloc.put(simple(name.substring(0, name.indexOf(':'))), v.orElse(Double.NaN));
            } else if (!name.contains(":")) {
                score.put(simple(name), v.orElse(Double.NaN));
                String e = r.get("Score Error (99.9%)");
                error.put(simple(name), e == null ? Double.NaN : Stats.parse(e).orElse(Double.NaN));
            }
        }
        if (score.isEmpty()) throw new IOException(jmh.path() + " has no benchmark rows");
        List<Row> rows = new ArrayList<>();
        for (Map.Entry<String, Double> e : score.entrySet()) {
            String b = e.getKey();
            Map<String, List<Double>> own = cRounds;
            if (bracketed) {
                Path p = perBenchmark.resolve(b + ".txt");
                if (!Files.exists(p)) throw new IOException(p + " is missing: the C rounds around " + b);
                own = new LinkedHashMap<>();
                readC(p, own);
            }
            List<Double> c = own.get(twin(b));
            rows.add(new Row(b, e.getValue(), error.get(b), c == null ? null : Stats.of(c),
                    alloc.getOrDefault(b, Double.NaN)));
        }
        // A C benchmark that JMH did not run (a -p or name filter in JMH_ARGS) still shows its median.
        cRounds.forEach((b, c) -> {
            if (!score.containsKey(b)) rows.add(new Row(b, Double.NaN, Double.NaN, Stats.of(c), Double.NaN));
        });
        return rows;
    }

    private static void readC(Path p, Map<String, List<Double>> rounds) throws IOException {
        for (String line : Files.readAllLines(p)) {
            String[] w = line.strip().split("\\s+");
            if (w.length != 2) continue;
            OptionalDouble v = Stats.parse(w[1]);
            if (v.isPresent()) rounds.computeIfAbsent(w[0], x -> new ArrayList<>()).add(v.getAsDouble());
        }
    }

    private static String twin(String benchmark) {
        for (String suffix : new String[] {CONFINED, BOUND}) {
            if (benchmark.endsWith(suffix)) return benchmark.substring(0, benchmark.length() - suffix.length());
        }
        return benchmark;
    }

    private static String simple(String benchmark) {
        return benchmark.substring(benchmark.lastIndexOf('.') + 1);
    }

    public static String table(List<Row> rows) {
        String fmt = "%-22s %12s %10s %12s %10s %14s  %s\n";
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, fmt, "benchmark", "Java ns/op", "± (99.9%)",
                "C ns/op", "Java/C", "alloc B/op", "C [min..max] (n)"));
        for (Row r : rows) {
            s.append(String.format(Locale.ROOT, fmt, r.benchmark(), num("%.1f", r.javaNs()), num("%.1f", r.javaError()),
                    r.c() == null ? "-" : num("%.1f", r.c().median()), num("%.2f", r.ratio()), num("%.3f", r.allocBytes()),
                    r.c() == null ? "-" : String.format(Locale.ROOT, "[%.1f..%.1f] (n=%d)", r.c().min(), r.c().max(), r.c().n())));
        }
        return s.toString();
    }

    public static String csv(List<Row> rows) {
        StringBuilder s = new StringBuilder("benchmark,java_ns_op,java_error,c_n,c_median,c_min,c_max,java_over_c,alloc_b_op\n");
        for (Row r : rows) {
            s.append(r.benchmark()).append(',').append(field(r.javaNs())).append(',').append(field(r.javaError())).append(',');
            s.append(r.c() == null ? "0,,," : String.format(Locale.ROOT, "%d,%.4f,%.4f,%.4f", r.c().n(), r.c().median(), r.c().min(), r.c().max()));
            s.append(',').append(field(r.ratio())).append(',').append(field(r.allocBytes())).append('\n');
        }
        return s.toString();
    }

    private static String field(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.4f", v);
    }

    private static String num(String fmt, double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, fmt, v);
    }
}
