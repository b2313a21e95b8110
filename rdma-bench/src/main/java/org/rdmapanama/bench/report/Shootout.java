package org.rdmapanama.bench.report;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * The raw.csv of scripts/transport-shootout (scripts/bench/shootout-lab-run): one row per run
 * across the two-host lab's cable, under one impairment (a loss or a one-way delay), with whether
 * the run completed and, when it did not, what failed. Reduced to one {@link Cell} per test,
 * condition, transport and side.
 * <p>
 * Columns: {@code condition,loss_pct,delay_ms,device,transport,test,bytes,side,round,metric,value,unit,status,detail}.
 * {@code status} is {@code ok} or {@code failed}; a failed run's {@code detail} says why
 * (retry counter exceeded, QP in error, time-out, ...).
 */
public final class Shootout {
    private Shootout() {}

    static final List<String> COLUMNS = List.of("condition", "loss_pct", "delay_ms", "device", "transport", "test",
            "bytes", "side", "round", "metric", "value", "unit", "status", "detail");

    /** An impairment of the cable: the clean one has both 0. */
    public record Condition(String label, double lossPct, double delayMs) {
        boolean clean() {
            return lossPct == 0 && delayMs == 0;
        }
    }

    /** What one run measures: a test at a size, by a metric. */
    public record Case(String test, String bytes, Metric metric) {
        String label() {
            return bytes.isEmpty() || bytes.equals("0") ? test : test + " " + bytes + " B";
        }
    }

    /** One side ({@code native} or {@code java}) on one device. */
    public record Series(String device, String transport, String side) {
        String label() {
            return transport + " " + (side.equals("java") ? "Java" : "native") + " (" + device + ")";
        }
    }

    /**
     * A case under a condition for one series: the measured rounds (null when none completed),
     * how many runs there were, and why the others failed.
     */
    public record Cell(Case c, Condition condition, Series series, Stats stats, int runs, List<String> failures) {
        int completed() {
            return stats == null ? 0 : stats.n();
        }
    }

    public record Loaded(List<Cell> cells, List<Condition> conditions, List<Case> cases, List<Series> series) {}

    public static Loaded load(Csv csv) throws IOException {
        csv.require(COLUMNS.toArray(String[]::new));
        Map<String, Condition> conditions = new LinkedHashMap<>();
        Map<String, Case> cases = new LinkedHashMap<>();
        Map<String, Series> series = new LinkedHashMap<>();
        Map<List<Object>, List<Double>> values = new LinkedHashMap<>();
        Map<List<Object>, List<String>> failures = new LinkedHashMap<>();
        Map<List<Object>, Integer> runs = new LinkedHashMap<>();
        for (Map<String, String> row : csv.rows()) {
            String side = row.get("side");
            if (!side.equals("native") && !side.equals("java")) {
                throw new IOException(csv.path() + ": side '" + side + "' is neither native nor java");
            }
            Condition cond = conditions.computeIfAbsent(row.get("condition"),
                    l -> new Condition(l, number(csv, row, "loss_pct"), number(csv, row, "delay_ms")));
            Case c = cases.computeIfAbsent(row.get("test") + "|" + row.get("bytes") + "|" + row.get("metric"),
                    k -> new Case(row.get("test"), row.get("bytes"), Metric.of(row.get("metric"), row.get("unit"))));
            Series s = series.computeIfAbsent(row.get("device") + "|" + side,
                    k -> new Series(row.get("device"), row.get("transport"), side));
            List<Object> key = List.of(c, cond, s);
            runs.merge(key, 1, Integer::sum);
            OptionalDouble v = Stats.parse(row.get("value"));
            if (row.get("status").equals("ok") && v.isPresent()) {
                values.computeIfAbsent(key, k -> new ArrayList<>()).add(v.getAsDouble());
            } else {
                String why = row.get("detail").isBlank() ? "no value" : row.get("detail");
                failures.computeIfAbsent(key, k -> new ArrayList<>()).add("round " + row.get("round") + ": " + why);
            }
        }
        List<Cell> cells = new ArrayList<>();
        for (var e : runs.entrySet()) {
            List<Object> k = e.getKey();
            List<Double> v = values.get(k);
            cells.add(new Cell((Case) k.get(0), (Condition) k.get(1), (Series) k.get(2), v == null ? null : Stats.of(v),
                    e.getValue(), failures.getOrDefault(k, List.of())));
        }
        // Columns per device, native before Java, devices in the order the runner met them.
        List<String> devices = series.values().stream().map(Series::device).distinct().toList();
        List<Series> ordered = series.values().stream().sorted(java.util.Comparator
                .comparingInt((Series x) -> devices.indexOf(x.device())).thenComparing(x -> !x.side().equals("native"))).toList();
        return new Loaded(cells, List.copyOf(conditions.values()), List.copyOf(cases.values()), ordered);
    }

    private static double number(Csv csv, Map<String, String> row, String column) {
        try {
            return Double.parseDouble(row.get(column));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(csv.path() + ": " + column + " '" + row.get(column) + "' is not a number");
        }
    }

    /**
     * summary.txt: per case, a row per condition and a column per transport and side, each
     * "median [min..max]" with how many runs completed; then every failed run and why.
     */
    public static String table(Loaded l, String date, int cores) {
        StringBuilder s = new StringBuilder();
        s.append("transport-shootout, ").append(date).append(", ").append(cores)
                .append(" cores, two qemu TCG guests joined by a cable with tc netem on both ends")
                .append(" (absolute figures are emulation; compare transports and sides)\n");
        for (Case c : l.cases()) {
            s.append('\n').append(c.label()).append(": ").append(c.metric().description()).append(" [")
                    .append(c.metric().unit()).append("], ").append(c.metric().lowerIsBetter() ? "lower" : "higher")
                    .append(" is better; k/n = runs completed of runs\n");
            List<String> head = new ArrayList<>(List.of("condition"));
            l.series().forEach(x -> head.add(x.label()));
            List<List<String>> lines = new ArrayList<>(List.of(head));
            for (Condition cond : l.conditions()) {
                List<String> line = new ArrayList<>(List.of(cond.label()));
                boolean any = false;
                for (Series x : l.series()) {
                    Cell cell = find(l, c, cond, x);
                    any |= cell != null;
                    line.add(cell == null ? "-" : text(cell));
                }
                if (any) lines.add(line);
            }
            s.append(align(lines));
        }
        List<String> failed = new ArrayList<>();
        for (Cell cell : l.cells()) {
            for (String f : cell.failures()) {
                failed.add("  " + cell.c().label() + ", " + cell.condition().label() + ", " + cell.series().label() + ", " + f);
            }
        }
        s.append("\nfailed runs: ").append(failed.isEmpty() ? "none\n" : failed.size() + "\n");
        failed.forEach(f -> s.append(f).append('\n'));
        return s.toString();
    }

    static Cell find(Loaded l, Case c, Condition cond, Series x) {
        for (Cell cell : l.cells()) {
            if (cell.c().equals(c) && cell.condition().equals(cond) && cell.series().equals(x)) return cell;
        }
        return null;
    }

    private static String text(Cell cell) {
        String done = cell.completed() + "/" + cell.runs();
        if (cell.stats() == null) return "failed " + done;
        Stats st = cell.stats();
        return String.format(Locale.ROOT, "%s [%s..%s] %s", fmt(st.median()), fmt(st.min()), fmt(st.max()), done);
    }

    /** Three significant figures: latencies run from microseconds to seconds under loss. */
    static String fmt(double v) {
        if (v == 0) return "0";
        double a = Math.abs(v);
        if (a >= 100) return String.format(Locale.ROOT, "%.0f", v);
        if (a >= 10) return String.format(Locale.ROOT, "%.1f", v);
        if (a >= 1) return String.format(Locale.ROOT, "%.2f", v);
        return String.format(Locale.ROOT, "%.3g", v);
    }

    private static String align(List<List<String>> lines) {
        int cols = lines.getFirst().size();
        int[] w = new int[cols];
        for (List<String> line : lines) {
            for (int i = 0; i < cols; i++) w[i] = Math.max(w[i], line.get(i).length());
        }
        StringBuilder s = new StringBuilder();
        for (List<String> line : lines) {
            s.append(' ');
            for (int i = 0; i < cols; i++) {
                s.append(' ').append(i == 0 ? pad(line.get(i), w[i], true) : pad(line.get(i), w[i], false));
            }
            s.append('\n');
        }
        return s.toString();
    }

    private static String pad(String v, int w, boolean left) {
        String fill = " ".repeat(w - v.length());
        return left ? v + fill : fill + v;
    }

    /** summary.csv: one row per case, condition, device and side. */
    public static String csv(Loaded l) {
        StringBuilder s = new StringBuilder("test,bytes,metric,unit,condition,loss_pct,delay_ms,device,transport,side,"
                + "runs,completed,median,min,max,failures\n");
        for (Cell cell : l.cells()) {
            Case c = cell.c();
            Condition cond = cell.condition();
            Series x = cell.series();
            s.append(String.join(",", c.test(), c.bytes(), c.metric().name(), c.metric().unit(), cond.label(),
                    num(cond.lossPct()), num(cond.delayMs()), x.device(), x.transport(), x.side(),
                    Integer.toString(cell.runs()), Integer.toString(cell.completed())));
            Stats st = cell.stats();
            s.append(',').append(st == null ? ",," : String.format(Locale.ROOT, "%.4f,%.4f,%.4f", st.median(), st.min(), st.max()));
            s.append(',').append(String.join("; ", cell.failures()).replace(',', ';')).append('\n');
        }
        return s.toString();
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    /** The conditions of one sweep, in order: the clean cable, then growing loss (or delay). */
    static List<Condition> sweep(Loaded l, boolean byLoss) {
        Set<Condition> out = new LinkedHashSet<>();
        l.conditions().stream().filter(Condition::clean).forEach(out::add);
        l.conditions().stream().filter(c -> !c.clean() && (byLoss ? c.delayMs() == 0 : c.lossPct() == 0))
                .sorted((a, b) -> Double.compare(byLoss ? a.lossPct() : a.delayMs(), byLoss ? b.lossPct() : b.delayMs()))
                .forEach(out::add);
        return List.copyOf(out);
    }
}
