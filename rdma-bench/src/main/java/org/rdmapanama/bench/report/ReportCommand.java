package org.rdmapanama.bench.report;

import org.rdmapanama.bench.CliArgs;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

/**
 * {@code rdma-bench report [--kind=KIND] DIR}: the statistics and the plot of every bench runner
 * (scripts/bench-vs-perftest, scripts/scale-vs-ucmatose, scripts/transport-shootout, scripts/jmh-vs-c)
 * from the raw files it left in DIR. Prints the table and writes DIR/summary.txt, DIR/summary.csv and, for the
 * side-by-side runners, DIR/plot.png. Exit status 0, 1 when DIR holds nothing to report, 2 for
 * bad usage.
 */
public final class ReportCommand {
    private ReportCommand() {}

    public enum Kind { AUTO, PERFTEST, SCALE, SHOOTOUT, JMH }

    @Command(name = "rdma-bench report", description = {
            "Medians with min..max over rounds, Java/native and a verdict per case, from a bench runner's output directory.",
            "Writes DIR/summary.txt, DIR/summary.csv and (perftest, scale) DIR/plot.png."})
    static final class Options {
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help")
        boolean help;
        @Option(names = "--kind", paramLabel = "KIND", defaultValue = "auto", description = {
                "auto, perftest (bench-vs-perftest), scale (scale-vs-ucmatose), shootout",
                "(transport-shootout) or jmh (jmh-vs-c);",
                "auto (default) goes by DIR/raw.csv's header, else DIR/jmh.csv"})
        Kind kind;
        @Parameters(paramLabel = "DIR", arity = "1",
                description = "the runner's output directory, e.g. bench-results/perftest-20261203T072952Z")
        Path dir;
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("report", args, out, err, a -> {
            Options o = new Options();
            return CliArgs.parse(o, a) ? o : null;
        }, s -> new CommandLine(new Options()).usage(s), o -> {
            try {
                return report(o.kind == Kind.AUTO ? detect(o.dir) : o.kind, o.dir, out, err);
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        });
    }

    /** Which runner wrote DIR: raw.csv's columns tell perftest from scale; jmh-vs-c leaves jmh.csv. */
    static Kind detect(Path dir) throws IOException {
        Path raw = dir.resolve("raw.csv");
        if (Files.exists(raw)) {
            List<String> header = Csv.read(raw).header();
            if (header.containsAll(Shootout.COLUMNS)) return Kind.SHOOTOUT;
            if (header.containsAll(SideBySide.Kind.PERFTEST.keyColumns)) return Kind.PERFTEST;
            if (header.containsAll(SideBySide.Kind.SCALE.keyColumns)) return Kind.SCALE;
            throw new IOException(raw + ": not the columns of bench-vs-perftest, scale-vs-ucmatose or transport-shootout (header: "
                    + String.join(",", header) + ")");
        }
        if (Files.exists(dir.resolve("jmh.csv"))) return Kind.JMH;
        throw new IOException(dir + " has neither raw.csv nor jmh.csv");
    }

    static int report(Kind kind, Path dir, PrintStream out, PrintStream err) throws IOException {
        if (kind == Kind.JMH) {
            List<JmhTable.Row> rows = JmhTable.load(dir);
            write(dir.resolve("summary.txt"), JmhTable.table(rows), out);
            Files.writeString(dir.resolve("summary.csv"), JmhTable.csv(rows));
            return CliArgs.OK;
        }
        String date = LocalDate.now(ZoneOffset.UTC).toString();
        if (kind == Kind.SHOOTOUT) {
            return shootout(dir, date, out, err);
        }
        SideBySide.Kind k = kind == Kind.PERFTEST ? SideBySide.Kind.PERFTEST : SideBySide.Kind.SCALE;
        SideBySide.Loaded loaded = SideBySide.load(k, Csv.read(dir.resolve("raw.csv")));
        if (loaded.skipped() > 0) {
            err.println("report: " + loaded.skipped() + " run(s) without a number (inf, empty) skipped");
        }
        write(dir.resolve("summary.txt"), SideBySide.table(k, loaded.rows(), date, Runtime.getRuntime().availableProcessors()), out);
        Files.writeString(dir.resolve("summary.csv"), SideBySide.csv(k, loaded.rows()));
        if (loaded.rows().isEmpty()) {
            err.println("rdma-bench report: " + dir.resolve("raw.csv") + " has no measured value: no plot");
            return CliArgs.FAILED;
        }
        Path png = dir.resolve("plot.png");
        String[] names = SideBySide.names(k, loaded.rows());
        Plot.write(png, names[0], names[1], names[2], loaded.rows());
        err.println("report: plot in " + png);
        return CliArgs.OK;
    }

    private static int shootout(Path dir, String date, PrintStream out, PrintStream err) throws IOException {
        Shootout.Loaded l = Shootout.load(Csv.read(dir.resolve("raw.csv")));
        write(dir.resolve("summary.txt"), Shootout.table(l, date, Runtime.getRuntime().availableProcessors()), out);
        Files.writeString(dir.resolve("summary.csv"), Shootout.csv(l));
        if (l.cells().stream().allMatch(c -> c.stats() == null)) {
            err.println("rdma-bench report: " + dir.resolve("raw.csv") + " has no completed run: no plot");
            return CliArgs.FAILED;
        }
        Path png = dir.resolve("plot.png");
        ShootoutPlot.write(png, l);
        err.println("report: plot in " + png);
        return CliArgs.OK;
    }

    private static void write(Path file, String text, PrintStream out) throws IOException {
        out.print(text);
        out.flush();
        Files.writeString(file, text);
    }
}
