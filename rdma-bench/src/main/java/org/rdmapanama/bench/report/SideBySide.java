package org.rdmapanama.bench.report;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The raw.csv of bench-vs-perftest (scripts/bench/lab-run) and of scale-vs-ucmatose
 * (scripts/bench/scale-lab-run): one row per run, native and Java rounds of the same cases,
 * reduced to one {@link Comparison} per device, case and metric.
 */
public final class SideBySide {
    private SideBySide() {}

    /**
     * The plot's title and its two series' names: a run whose every case names its two programs as
     * {@code java/other} (bench-channel: ib_send_lat, rstream, tcp_lat, ...) compares against more than
     * native perftest, and says so.
     */
    static String[] names(Kind kind, List<Comparison> rows) {
        boolean paired = kind == Kind.PERFTEST && !rows.isEmpty()
                && rows.stream().allMatch(c -> !c.key().isEmpty() && c.key().getFirst().contains("/"));
        return paired
                ? new String[] {"rdma-panama against the program after the slash", "the program after the slash",
                        "the program before the slash (Java)"}
                : new String[] {kind.plotTitle, kind.nativeName, kind.javaName};
    }

    public enum Kind {
        /** {@code device,transport,test,bytes,side,round,metric,value,unit} */
        PERFTEST("bench-vs-perftest", List.of("test", "bytes"), "native perftest", "Java (rdma-bench)",
                "native perftest vs rdma-panama (Java)"),
        /** {@code device,transport,connections,side,round,metric,value,unit} */
        SCALE("scale-vs-ucmatose", List.of("connections"), "native ucmatose", "Java (rdma-bench scale)",
                "native ucmatose vs rdma-bench scale (Java)");

        final String runner;
        final List<String> keyColumns;
        final String nativeName;
        final String javaName;
        final String plotTitle;

        Kind(String runner, List<String> keyColumns, String nativeName, String javaName, String plotTitle) {
            this.runner = runner;
            this.keyColumns = keyColumns;
            this.nativeName = nativeName;
            this.javaName = javaName;
            this.plotTitle = plotTitle;
        }

        String label(List<String> key) {
            return this == PERFTEST ? key.get(0) + " " + key.get(1) + " B" : key.get(0) + " connections";
        }

        /** ucmatose does not time connecting alone, so the Java-only connect_rate rows compare with nothing. */
        boolean compares(String metric) {
            return this == PERFTEST || List.of("session_rate", "cold_rate", "warm_rate").contains(metric);
        }
    }

    /** The comparisons, and how many rows had no number (perftest's "inf", an empty field). */
    public record Loaded(List<Comparison> rows, int skipped) {}

    /**
     * bench-vs-perftest's third side: a Java client against a native server. Its row compares
     * that pair with the native pair, so a ratio away from 1 is the Java client's doing.
     */
    public static final String MIXED = "mixed";
    static final String MIXED_LABEL = ", Java client + native server";

    private record Group(String device, String transport, List<String> key, String metric, String unit, boolean mixed) {
        Group unmixed() {
            return new Group(device, transport, key, metric, unit, false);
        }
    }

    public static Loaded load(Kind kind, Csv csv) throws IOException {
        List<String> need = new ArrayList<>(List.of("device", "transport", "side", "metric", "value", "unit"));
        need.addAll(kind.keyColumns);
        csv.require(need.toArray(String[]::new));
        Map<Group, Map<String, List<Double>>> groups = new LinkedHashMap<>();
        int skipped = 0;
        for (Map<String, String> row : csv.rows()) {
            if (!kind.compares(row.get("metric"))) continue;
            String side = row.get("side");
            boolean mixed = kind == Kind.PERFTEST && side.equals(MIXED);
            if (!side.equals("native") && !side.equals("java") && !mixed) {
                throw new IOException(csv.path() + ": side '" + side + "' is neither native nor java"
                        + (kind == Kind.PERFTEST ? " nor " + MIXED : ""));
            }
            OptionalDouble v = Stats.parse(row.get("value"));
            if (v.isEmpty()) {
                skipped++;
                continue;
            }
            List<String> key = kind.keyColumns.stream().map(row::get).toList();
            Group g = new Group(row.get("device"), row.get("transport"), key, row.get("metric"), row.get("unit"), mixed);
            groups.computeIfAbsent(g, x -> new HashMap<>()).computeIfAbsent(mixed ? "java" : side, x -> new ArrayList<>())
                    .add(v.getAsDouble());
        }
        List<Comparison> rows = new ArrayList<>();
        for (var e : groups.entrySet()) {
            Group g = e.getKey();
            // A mixed pair's Java client is held against the same case's native pair.
            var sides = g.mixed() ? groups.getOrDefault(g.unmixed(), Map.of()) : e.getValue();
            List<Double> n = sides.get("native"), j = e.getValue().get("java");
            String label = kind.label(g.key()) + (g.mixed() ? MIXED_LABEL : "");
            rows.add(new Comparison(g.device(), g.transport(), g.key(), label, Metric.of(g.metric(), g.unit()),
                    n == null ? null : Stats.of(n), j == null ? null : Stats.of(j)));
        }
        // In raw.csv's order, which is the runner's DEVICES and CASES order; devices grouped.
        List<String> devices = rows.stream().map(Comparison::device).distinct().toList();
        rows.sort(Comparator.comparingInt(c -> devices.indexOf(c.device())));
        return new Loaded(List.copyOf(rows), skipped);
    }

    /** summary.txt: a header line, then per device one line per case. */
    public static String table(Kind kind, List<Comparison> rows, String date, int cores) {
        StringBuilder s = new StringBuilder();
        s.append(kind.runner).append(", ").append(date).append(", ").append(cores)
                .append(" cores, qemu TCG guest (absolute figures are emulation; compare ratios)\n");
        int wl = 16, wm = 10, wn = 24, wj = 24;
        for (Comparison c : rows) {
            wl = Math.max(wl, c.label().length());
            wm = Math.max(wm, c.metric().name().length());
            wn = Math.max(wn, spread(c.nat()).length());
            wj = Math.max(wj, spread(c.java()).length());
        }
        String fmt = "  %-" + wl + "s %-" + wm + "s %" + wn + "s %" + wj + "s %11s  %s\n";
        for (String device : rows.stream().map(Comparison::device).distinct().toList()) {
            List<Comparison> mine = rows.stream().filter(c -> c.device().equals(device)).toList();
            s.append('\n').append(device).append(" (").append(mine.getFirst().transport()).append(")\n");
            s.append(String.format(Locale.ROOT, fmt, "case", "metric", "native median [min..max]", "java median [min..max]",
                    "java/native", "verdict"));
            for (Comparison c : mine) {
                String verdict = c.verdict() + " (" + c.metric().unit() + ", n=" + n(c.nat()) + "/" + n(c.java()) + ")";
                s.append(String.format(Locale.ROOT, fmt, c.label(), c.metric().name(), spread(c.nat()), spread(c.java()),
                        Double.isNaN(c.ratio()) ? "-" : String.format(Locale.ROOT, "%.3f", c.ratio()), verdict));
            }
        }
        return s.toString();
    }

    /**
     * summary.csv: one row per case, the case's own raw.csv columns first; for perftest then
     * {@code java_side}: {@code java} (both ends Java) or {@code mixed} (Java client, native server).
     */
    public static String csv(Kind kind, List<Comparison> rows) {
        StringBuilder s = new StringBuilder("device,transport,");
        for (String k : kind.keyColumns) s.append(k).append(',');
        if (kind == Kind.PERFTEST) s.append("java_side,");
        s.append("metric,unit,native_n,native_median,native_min,native_max,java_n,java_median,java_min,java_max,java_over_native,verdict\n");
        for (Comparison c : rows) {
            s.append(c.device()).append(',').append(c.transport()).append(',');
            for (String k : c.key()) s.append(k).append(',');
            if (kind == Kind.PERFTEST) s.append(c.label().endsWith(MIXED_LABEL) ? MIXED : "java").append(',');
            s.append(c.metric().name()).append(',').append(c.metric().unit()).append(',');
            s.append(fields(c.nat())).append(',').append(fields(c.java())).append(',');
            s.append(Double.isNaN(c.ratio()) ? "" : String.format(Locale.ROOT, "%.4f", c.ratio())).append(',');
            s.append(c.verdict()).append('\n');
        }
        return s.toString();
    }

    private static String spread(Stats st) {
        if (st == null) return "-";
        // Message rates are fractions of a Mpps under emulation: two decimals would hide them.
        String f = st.median() < 1 ? "%.4f" : "%.2f";
        return String.format(Locale.ROOT, f + " [" + f + ".." + f + "]", st.median(), st.min(), st.max());
    }

    private static int n(Stats st) {
        return st == null ? 0 : st.n();
    }

    private static String fields(Stats st) {
        return st == null ? "0,,," : String.format(Locale.ROOT, "%d,%.4f,%.4f,%.4f", st.n(), st.median(), st.min(), st.max());
    }
}
