package org.rdmapanama.bench.report;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

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

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;

    public enum Kind { AUTO, PERFTEST, SCALE, SHOOTOUT, JMH }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        // Built without annotations: picocli's reflection would need this package opened to it.
        CommandSpec spec = CommandSpec.create().name("rdma-bench report");
        spec.usageMessage().description(
                "Medians with min..max over rounds, Java/native and a verdict per case, from a bench runner's output directory.",
                "Writes DIR/summary.txt, DIR/summary.csv and (perftest, scale) DIR/plot.png.");
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("show this help").build());
        spec.addOption(OptionSpec.builder("--kind").paramLabel("KIND").type(Kind.class).defaultValue("auto")
                .description("auto, perftest (bench-vs-perftest), scale (scale-vs-ucmatose), shootout",
                        "(transport-shootout) or jmh (jmh-vs-c);",
                        "auto (default) goes by DIR/raw.csv's header, else DIR/jmh.csv")
                .build());
        spec.addPositional(PositionalParamSpec.builder().paramLabel("DIR").type(Path.class).arity("1").required(true)
                .description("the runner's output directory, e.g. bench-results/perftest-20261203T072952Z").build());
        CommandLine cl = new CommandLine(spec);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        ParseResult parsed;
        try {
            parsed = cl.parseArgs(args);
        } catch (ParameterException e) {
            err.println("rdma-bench report: " + e.getMessage());
            cl.usage(err);
            return USAGE;
        }
        if (parsed.isUsageHelpRequested()) {
            cl.usage(out);
            return OK;
        }
        Kind kind = parsed.matchedOptionValue("--kind", Kind.AUTO);
        Path dir = parsed.matchedPositionalValue(0, null);
        try {
            return report(kind == Kind.AUTO ? detect(dir) : kind, dir, out, err);
        } catch (IOException | UncheckedIOException | IllegalArgumentException e) {
            err.println("rdma-bench report: " + e.getMessage());
            return FAILED;
        }
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
            return OK;
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
            return FAILED;
        }
        Path png = dir.resolve("plot.png");
        Plot.write(png, k.plotTitle, k.nativeName, k.javaName, loaded.rows());
        err.println("report: plot in " + png);
        return OK;
    }

    private static int shootout(Path dir, String date, PrintStream out, PrintStream err) throws IOException {
        Shootout.Loaded l = Shootout.load(Csv.read(dir.resolve("raw.csv")));
        write(dir.resolve("summary.txt"), Shootout.table(l, date, Runtime.getRuntime().availableProcessors()), out);
        Files.writeString(dir.resolve("summary.csv"), Shootout.csv(l));
        if (l.cells().stream().allMatch(c -> c.stats() == null)) {
            err.println("rdma-bench report: " + dir.resolve("raw.csv") + " has no completed run: no plot");
            return FAILED;
        }
        Path png = dir.resolve("plot.png");
        ShootoutPlot.write(png, l);
        err.println("report: plot in " + png);
        return OK;
    }

    private static void write(Path file, String text, PrintStream out) throws IOException {
        out.print(text);
        out.flush();
        Files.writeString(file, text);
    }
}
