package org.rdmapanama.nettybench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * scripts/bench-netty's raw.csv reduced: per device, series and case, the median over rounds of each metric
 * (with min..max), and the targets: Netty over RDMA against the raw channel at 64 B and 1 KiB.
 */
final class Summary {
    static final List<String> KEY = List.of("device", "transport", "round");
    static final List<String> SERIES_ORDER = List.of("channel", "netty-rdma", "netty-epoll", "grpc-unary-rdma",
            "grpc-unary-epoll", "grpc-stream-rdma", "grpc-stream-epoll");

    /** A metric of a result, and how the report names it. */
    enum Metric {
        P50("p50 latency", "us", true, Result::p50Us),
        P99("p99 latency", "us", true, Result::p99Us),
        RATE("messages/s", "msg/s", false, Result::msgsPerSec),
        CPU("CPU per message (client + server)", "us/msg", true, Result::cpuUsPerMsg);

        final String title;
        final String unit;
        final boolean lowerIsBetter;
        final ToDoubleFunction<Result> of;

        Metric(String title, String unit, boolean lowerIsBetter, ToDoubleFunction<Result> of) {
            this.title = title;
            this.unit = unit;
            this.lowerIsBetter = lowerIsBetter;
            this.of = of;
        }
    }

    /** Median, min and max over rounds. */
    record Stat(int n, double median, double min, double max) {
        static Stat of(double[] v) {
            double[] s = v.clone();
            Arrays.sort(s);
            int n = s.length;
            double m = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
            return new Stat(n, m, s[0], s[n - 1]);
        }
    }

    record Cell(String device, String series, Result.Case kase, List<Result> rounds) {
        Stat stat(Metric m) {
            return Stat.of(rounds.stream().mapToDouble(m.of).toArray());
        }
    }

    final Map<String, String> transports = new LinkedHashMap<>();
    final List<String> series;
    final List<Result.Case> cases;
    private final Map<List<Object>, Cell> cells = new LinkedHashMap<>();

    Summary(List<String[]> rows, List<String> header) throws IOException {
        for (String c : KEY) {
            if (!header.contains(c)) throw new IOException("raw.csv has no column '" + c + "'");
        }
        for (String c : Result.COLUMNS) {
            if (!header.contains(c)) throw new IOException("raw.csv has no column '" + c + "'");
        }
        Set<String> seenSeries = new LinkedHashSet<>();
        Set<Result.Case> seenCases = new LinkedHashSet<>();
        Map<List<Object>, List<Result>> by = new LinkedHashMap<>();
        for (String[] f : rows) {
            java.util.function.Function<String, String> col = c -> f[header.indexOf(c)];
            Result r = new Result(col.apply("series"), Integer.parseInt(col.apply("bytes")),
                    Integer.parseInt(col.apply("connections")), Integer.parseInt(col.apply("window")),
                    Long.parseLong(col.apply("messages")), Double.parseDouble(col.apply("seconds")),
                    Double.parseDouble(col.apply("p50_us")), Double.parseDouble(col.apply("p99_us")),
                    Double.parseDouble(col.apply("msgs_per_s")), Double.parseDouble(col.apply("cpu_us_per_msg")));
            transports.putIfAbsent(col.apply("device"), col.apply("transport"));
            seenSeries.add(r.series());
            seenCases.add(r.kase());
            by.computeIfAbsent(List.of(col.apply("device"), r.series(), r.kase()), k -> new ArrayList<>()).add(r);
        }
        for (var e : by.entrySet()) {
            List<Object> k = e.getKey();
            cells.put(k, new Cell((String) k.get(0), (String) k.get(1), (Result.Case) k.get(2), e.getValue()));
        }
        List<String> s = new ArrayList<>(SERIES_ORDER.stream().filter(seenSeries::contains).toList());
        seenSeries.stream().filter(x -> !s.contains(x)).forEach(s::add);
        series = List.copyOf(s);
        cases = seenCases.stream().sorted(java.util.Comparator.comparingInt(Result.Case::bytes)
                .thenComparingInt(Result.Case::connections).thenComparingInt(Result.Case::window)).toList();
    }

    static Summary read(Path raw) throws IOException {
        List<String> lines = Files.readAllLines(raw).stream().filter(l -> !l.isBlank()).toList();
        if (lines.isEmpty()) throw new IOException(raw + " is empty");
        List<String> header = List.of(lines.getFirst().split(",", -1));
        List<String[]> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",", -1);
            if (f.length != header.size()) throw new IOException(raw + ":" + (i + 1) + ": " + f.length + " fields, the header has " + header.size());
            rows.add(f);
        }
        return new Summary(rows, header);
    }

    Cell cell(String device, String s, Result.Case c) {
        return cells.get(List.of(device, s, c));
    }

    /** netty-rdma over channel for a metric's medians; NaN where either is missing. */
    double ratio(String device, Result.Case c, Metric m) {
        Cell n = cell(device, "netty-rdma", c);
        Cell ch = cell(device, "channel", c);
        if (n == null || ch == null) return Double.NaN;
        double d = ch.stat(m).median();
        return d == 0 ? Double.NaN : n.stat(m).median() / d;
    }

    String table(String date) {
        StringBuilder s = new StringBuilder("netty-bench, " + date + ": medians over rounds (min..max in summary.csv);"
                + " qemu TCG guest, soft RDMA devices, client and server in one guest on a vCPU each\n");
        for (String dev : transports.keySet()) {
            for (Metric m : Metric.values()) {
                s.append('\n').append(dev).append(" (").append(transports.get(dev)).append("): ").append(m.title)
                        .append(" [").append(m.unit).append("], ").append(m.lowerIsBetter ? "lower" : "higher")
                        .append(" is better\n");
                s.append(String.format(Locale.ROOT, "  %-16s", "case"));
                series.forEach(x -> s.append(String.format(Locale.ROOT, " %17s", x)));
                s.append('\n');
                for (Result.Case c : cases) {
                    s.append(String.format(Locale.ROOT, "  %-16s", c.label()));
                    for (String x : series) {
                        Cell cell = cell(dev, x, c);
                        s.append(String.format(Locale.ROOT, " %17s", cell == null ? "-" : fmt(cell.stat(m).median())));
                    }
                    s.append('\n');
                }
            }
        }
        s.append("\ntargets: netty-rdma / channel, p50 <= 1.5x and msgs/s >= 0.8x (64 B and 1 KiB)\n");
        s.append(String.format(Locale.ROOT, "  %-8s %-16s %10s %6s %12s %6s%n", "device", "case", "p50 ratio", "met",
                "rate ratio", "met"));
        for (String dev : transports.keySet()) {
            for (Result.Case c : cases) {
                if (c.bytes() > 1024) continue;
                double p = ratio(dev, c, Metric.P50);
                double r = ratio(dev, c, Metric.RATE);
                s.append(String.format(Locale.ROOT, "  %-8s %-16s %10.2f %6s %12.2f %6s%n", dev, c.label(), p,
                        Double.isNaN(p) ? "-" : p <= 1.5 ? "yes" : "no", r, Double.isNaN(r) ? "-" : r >= 0.8 ? "yes" : "no"));
            }
        }
        return s.toString();
    }

    String csv() {
        StringBuilder s = new StringBuilder("device,transport,series,bytes,connections,window,rounds");
        for (Metric m : Metric.values()) {
            String n = m.name().toLowerCase(Locale.ROOT);
            s.append(',').append(n).append("_median,").append(n).append("_min,").append(n).append("_max");
        }
        s.append('\n');
        for (Cell c : cells.values()) {
            s.append(String.join(",", c.device(), transports.get(c.device()), c.series(),
                    Integer.toString(c.kase().bytes()), Integer.toString(c.kase().connections()),
                    Integer.toString(c.kase().window()), Integer.toString(c.rounds().size())));
            for (Metric m : Metric.values()) {
                Stat st = c.stat(m);
                s.append(String.format(Locale.ROOT, ",%.3f,%.3f,%.3f", st.median(), st.min(), st.max()));
            }
            s.append('\n');
        }
        return s.toString();
    }

    /** Three significant figures. */
    static String fmt(double v) {
        double a = Math.abs(v);
        if (a >= 100) return String.format(Locale.ROOT, "%.0f", v);
        if (a >= 10) return String.format(Locale.ROOT, "%.1f", v);
        if (a >= 1) return String.format(Locale.ROOT, "%.2f", v);
        return String.format(Locale.ROOT, "%.3g", v);
    }
}
