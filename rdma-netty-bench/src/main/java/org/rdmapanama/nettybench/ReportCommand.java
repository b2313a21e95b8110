package org.rdmapanama.nettybench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.concurrent.Callable;

/** {@code rdma-netty-bench report DIR}: DIR/raw.csv to DIR/summary.txt (printed), summary.csv and plot.png. */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = "Medians over rounds per device, series and case from DIR/raw.csv (scripts/bench-netty);"
                + " writes DIR/summary.txt, DIR/summary.csv and DIR/plot.png.")
final class ReportCommand implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", description = "the runner's output directory (bench-results/netty-...)")
    Path dir;

    @Override
    public Integer call() throws Exception {
        Summary s = Summary.read(dir.resolve("raw.csv"));
        String text = s.table(LocalDate.now(ZoneOffset.UTC).toString());
        Path failed = dir.resolve("failed.txt");
        if (Files.exists(failed) && Files.size(failed) > 0) {
            text += "\nfailed (cases without a row above; from failed.txt):\n" + Files.readString(failed);
        }
        System.out.print(text);
        Files.writeString(dir.resolve("summary.txt"), text);
        Files.writeString(dir.resolve("summary.csv"), s.csv());
        if (s.cases.isEmpty()) {
            System.err.println("report: no measured case: no plot");
            return 1;
        }
        Path png = dir.resolve("plot.png");
        ReportPlot.write(png, s);
        System.err.println("report: plot in " + png);
        return 0;
    }
}
