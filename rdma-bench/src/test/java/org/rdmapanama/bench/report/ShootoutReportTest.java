package org.rdmapanama.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdmapanama.bench.report.ReportCommandTest.line;
import static org.rdmapanama.bench.report.ReportCommandTest.png;
import static org.rdmapanama.bench.report.ReportCommandTest.run;

class ShootoutReportTest {
    static final String HEADER = String.join(",", Shootout.COLUMNS);

    static String row(String cond, double loss, double delay, String dev, String tr, String test, String bytes, String side,
                      int round, String metric, String value, String unit, String status, String detail) {
        return String.join(",", cond, Double.toString(loss), Double.toString(delay), dev, tr, test, bytes, side,
                Integer.toString(round), metric, value, unit, status, detail);
    }

    /** As scripts/bench/shootout-lab-run writes it: rounds per condition, a failed run with its reason. */
    @Test
    void conditionsBecomeRowsTransportsAndSidesColumnsAndFailuresAreListed(@TempDir Path dir) throws IOException {
        List<String> lines = new ArrayList<>(List.of(HEADER));
        String[][] conds = {{"clean", "0", "0"}, {"loss 1%", "1", "0"}, {"loss 5%", "5", "0"}, {"delay 10ms", "0", "10"}};
        for (String[] c : conds) {
            double loss = Double.parseDouble(c[1]), delay = Double.parseDouble(c[2]);
            for (int r = 1; r <= 3; r++) {
                for (String side : List.of("native", "java")) {
                    lines.add(row(c[0], loss, delay, "rxe0", "RoCEv2", "write_bw", "65536", side, r, "bw_average",
                            Double.toString(100 / (1 + 10 * loss) + r), "MB/sec", "ok", ""));
                    lines.add(row(c[0], loss, delay, "siw0", "iWARP", "write_bw", "65536", side, r, "bw_average",
                            Double.toString(80 / (1 + loss) + r), "MB/sec", "ok", ""));
                }
            }
        }
        // RoCE at 5% loss: one Java round ran out of retries, the others measured.
        lines.set(lines.indexOf(row("loss 5%", 5, 0, "rxe0", "RoCEv2", "write_bw", "65536", "java", 2, "bw_average",
                Double.toString(100 / 51.0 + 2), "MB/sec", "ok", "")),
                row("loss 5%", 5, 0, "rxe0", "RoCEv2", "write_bw", "65536", "java", 2, "bw_average", "", "MB/sec", "failed",
                        "retry counter exceeded (IBV_WC_RETRY_EXC_ERR)"));
        Files.write(dir.resolve("raw.csv"), lines);

        ReportCommandTest.Result res = run(dir.toString());
        assertEquals(0, res.status(), res.err());
        String clean = line(res.out(), "clean");
        assertTrue(clean.matches("clean +102 \\[101\\.\\.103] 3/3 +102 \\[101\\.\\.103] 3/3 +82\\.0 \\[81\\.0\\.\\.83\\.0] 3/3.*"), clean);
        String lossy = line(res.out(), "loss 5%");
        assertTrue(lossy.contains("2/3"), lossy);
        assertTrue(res.out().contains("failed runs: 1"), res.out());
        assertTrue(res.out().contains("write_bw 65536 B, loss 5%, RoCEv2 Java (rxe0), round 2: retry counter exceeded"), res.out());
        String csv = Files.readString(dir.resolve("summary.csv"));
        assertTrue(csv.lines().anyMatch(l -> l.startsWith("write_bw,65536,bw_average,MB/sec,loss 5%,5,0,rxe0,RoCEv2,java,3,2,")), csv);
        BufferedImage img = png(dir.resolve("plot.png"));
        // One case, two sweeps (loss and delay): one row of two panels.
        assertEquals(2 * ShootoutPlot.PANEL_W, img.getWidth());
        assertEquals(ShootoutPlot.TITLE_H + ShootoutPlot.PANEL_H, img.getHeight());
    }

    @Test
    void aConditionWhereNothingCompletedSaysSoAndAllFailedMeansNoPlot(@TempDir Path dir) throws IOException {
        Files.write(dir.resolve("raw.csv"), List.of(HEADER,
                row("clean", 0, 0, "rxe0", "RoCEv2", "connect", "0", "native", 1, "setup_ms", "", "ms", "failed", "time-out after 60 s"),
                row("loss 5%", 5, 0, "rxe0", "RoCEv2", "connect", "0", "native", 1, "setup_ms", "", "ms", "failed", "REJECTED")));
        ReportCommandTest.Result res = run(dir.toString());
        assertEquals(1, res.status());
        assertTrue(line(res.out(), "loss 5%").endsWith("failed 0/1"), res.out());
        assertTrue(res.err().contains("no completed run"), res.err());
    }

    @Test
    void anUnknownSideOrConditionNumberIsRefusedNamingTheFile(@TempDir Path dir) throws IOException {
        Files.write(dir.resolve("raw.csv"), List.of(HEADER,
                row("clean", 0, 0, "rxe0", "RoCEv2", "write_lat", "2", "python", 1, "t_typical", "10", "usec", "ok", "")));
        ReportCommandTest.Result res = run(dir.toString());
        assertEquals(1, res.status());
        assertTrue(res.err().contains("raw.csv: side 'python' is neither native nor java"), res.err());
    }
}
