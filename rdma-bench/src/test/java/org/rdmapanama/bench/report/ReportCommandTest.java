package org.rdmapanama.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportCommandTest {
    record Result(int status, String out, String err) {}

    static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = ReportCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static void write(Path file, String... lines) throws IOException {
        Files.writeString(file, String.join("\n", lines) + "\n");
    }

    static String line(String text, String start) {
        return text.lines().map(String::strip).filter(l -> l.startsWith(start)).findFirst().orElseThrow(() -> new AssertionError(start + " not in\n" + text));
    }

    static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    static BufferedImage png(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        assertArrayEquals(PNG_MAGIC, Arrays.copyOf(bytes, 8), "PNG signature");
        return ImageIO.read(file.toFile());
    }

    /** As scripts/bench/lab-run writes it: one row per run that gave a number, plus an "inf" the tool must skip. */
    @Test
    void perftestRawCsvGivesTheTableTheCsvAndThePlot(@TempDir Path dir) throws IOException {
        write(dir.resolve("raw.csv"),
                "device,transport,test,bytes,side,round,metric,value,unit",
                "rxe0,RoCEv2,write_lat,2,native,1,t_typical,10.00,usec",
                "rxe0,RoCEv2,write_lat,2,java,1,t_typical,10.50,usec",
                "rxe0,RoCEv2,write_lat,2,java,2,t_typical,11.50,usec",
                "rxe0,RoCEv2,write_lat,2,native,2,t_typical,12.00,usec",
                "rxe0,RoCEv2,write_lat,2,native,3,t_typical,11.00,usec",
                "rxe0,RoCEv2,write_lat,2,java,3,t_typical,inf,usec",
                "rxe0,RoCEv2,write_lat,2,java,4,t_typical,11.00,usec",
                "rxe0,RoCEv2,write_lat,2,native,4,t_typical,13.00,usec",
                "rxe0,RoCEv2,write_bw,65536,native,1,bw_average,40.00,MB/sec",
                "rxe0,RoCEv2,write_bw,65536,java,1,bw_average,20.00,MB/sec",
                "siw0,iWARP,write_lat,2,native,1,t_typical,20.00,usec",
                "siw0,iWARP,write_lat,2,java,1,t_typical,40.00,usec");
        Result r = run(dir.toString());
        assertEquals(0, r.status(), r.err());
        assertTrue(r.err().contains("1 run(s) without a number"), r.err());
        String txt = Files.readString(dir.resolve("summary.txt"));
        assertEquals(txt, r.out());
        assertTrue(txt.startsWith("bench-vs-perftest, "), txt);
        // native 10, 11, 12, 13 -> 11.5; Java 10.5, 11, 11.5 (inf skipped) -> 11; 11/11.5 = 0.957 inside spread 3/11.5.
        String lat = line(txt, "write_lat 2 B");
        assertTrue(lat.matches("write_lat 2 B +t_typical +11\\.50 \\[10\\.00\\.\\.13\\.00] +11\\.00 \\[10\\.50\\.\\.11\\.50] +0\\.957 +within spread \\(usec, n=4/3\\)"), lat);
        // One round each: half the bandwidth, but nothing to judge it by.
        assertTrue(line(txt, "write_bw 65536 B").contains("0.500  too few rounds to judge (needs 3 per side) (MB/sec, n=1/1)"), txt);
        assertFalse(txt.contains("java worse"), txt);
        assertTrue(txt.indexOf("rxe0 (RoCEv2)") < txt.indexOf("siw0 (iWARP)"), txt);

        List<String> csv = Files.readAllLines(dir.resolve("summary.csv"));
        assertEquals("device,transport,test,bytes,java_side,metric,unit,native_n,native_median,native_min,native_max,"
                + "java_n,java_median,java_min,java_max,java_over_native,verdict", csv.get(0));
        assertEquals("rxe0,RoCEv2,write_lat,2,java,t_typical,usec,4,11.5000,10.0000,13.0000,3,11.0000,10.5000,11.5000,0.9565,within spread", csv.get(1));
        assertEquals(4, csv.size());

        // Two devices: two rows of panels, latency and bandwidth side by side.
        BufferedImage img = png(dir.resolve("plot.png"));
        assertEquals(2 * Plot.PANEL_W, img.getWidth());
        assertEquals(Plot.TITLE_H + 2 * Plot.PANEL_H, img.getHeight());
    }

    /** A Java client against a native server is its own row, held against the native pair; message rate is a metric. */
    @Test
    void mixedPairsAndMessageRate(@TempDir Path dir) throws IOException {
        write(dir.resolve("raw.csv"),
                "device,transport,test,bytes,side,round,metric,value,unit",
                "rxe0,RoCEv2,write_bw,2,native,1,msg_rate,0.100,Mpps",
                "rxe0,RoCEv2,write_bw,2,java,1,msg_rate,0.090,Mpps",
                "rxe0,RoCEv2,write_bw,2,mixed,1,msg_rate,0.050,Mpps",
                "rxe0,RoCEv2,write_bw,2,native,2,msg_rate,0.110,Mpps",
                "rxe0,RoCEv2,write_bw,2,java,2,msg_rate,0.100,Mpps",
                "rxe0,RoCEv2,write_bw,2,mixed,2,msg_rate,0.060,Mpps");
        Result r = run(dir.toString());
        assertEquals(0, r.status(), r.err());
        String txt = Files.readString(dir.resolve("summary.txt"));
        // native 0.100, 0.110 -> 0.105; Java 0.095 (0.905); the mixed pair 0.055 (0.524).
        assertTrue(line(txt, "write_bw 2 B ").matches("write_bw 2 B +msg_rate +0\\.1050 .* 0\\.905 .*"), txt);
        assertTrue(line(txt, "write_bw 2 B, Java client + native server")
                .matches(".* msg_rate +0\\.1050 \\[0\\.1000\\.\\.0\\.1100] +0\\.0550 \\[0\\.0500\\.\\.0\\.0600] +0\\.524 +too few rounds.*"), txt);
        List<String> csv = Files.readAllLines(dir.resolve("summary.csv"));
        assertEquals(3, csv.size());
        assertTrue(csv.get(1).startsWith("rxe0,RoCEv2,write_bw,2,java,msg_rate,Mpps,2,0.1050,"), csv.get(1));
        assertTrue(csv.get(2).startsWith("rxe0,RoCEv2,write_bw,2,mixed,msg_rate,Mpps,2,0.1050,"), csv.get(2));
        assertTrue(Files.exists(dir.resolve("plot.png")));
    }

    /** As scripts/bench/scale-lab-run writes it: native's one exec-to-exit rate under both metrics, Java's cold and warm. */
    @Test
    void scaleRawCsvComparesColdAndWarmRates(@TempDir Path dir) throws IOException {
        write(dir.resolve("raw.csv"),
                "device,transport,connections,side,round,metric,value,unit",
                "rxe0,RoCEv2,256,native,1,cold_rate,100.0,conn/s",
                "rxe0,RoCEv2,256,native,1,warm_rate,100.0,conn/s",
                "rxe0,RoCEv2,256,java,1,cold_rate,20.0,conn/s",
                "rxe0,RoCEv2,256,java,1,warm_rate,150.0,conn/s",
                "rxe0,RoCEv2,256,java,1,connect_rate,900.0,conn/s",
                "rxe0,RoCEv2,256,native,2,cold_rate,110.0,conn/s",
                "rxe0,RoCEv2,256,native,2,warm_rate,110.0,conn/s",
                "rxe0,RoCEv2,256,java,2,cold_rate,22.0,conn/s",
                "rxe0,RoCEv2,256,java,2,warm_rate,160.0,conn/s",
                "rxe0,RoCEv2,256,native,3,cold_rate,105.0,conn/s",
                "rxe0,RoCEv2,256,native,3,warm_rate,105.0,conn/s",
                "rxe0,RoCEv2,256,java,3,cold_rate,21.0,conn/s",
                "rxe0,RoCEv2,256,java,3,warm_rate,155.0,conn/s");
        Result r = run(dir.toString());
        assertEquals(0, r.status(), r.err());
        String txt = Files.readString(dir.resolve("summary.txt"));
        assertTrue(txt.startsWith("scale-vs-ucmatose, "), txt);
        // Higher is better and the ranges do not come near: 155/105 = 1.476 against a spread of 10/155.
        String warm = txt.lines().filter(l -> l.contains("warm_rate")).findFirst().orElseThrow().strip();
        assertTrue(warm.matches("256 connections +warm_rate +105\\.00 \\[100\\.00\\.\\.110\\.00] +155\\.00 \\[150\\.00\\.\\.160\\.00] +1\\.476 +java better \\(conn/s, n=3/3\\)"), warm);
        String cold = txt.lines().filter(l -> l.contains("cold_rate")).findFirst().orElseThrow().strip();
        assertTrue(cold.matches("256 connections +cold_rate +105\\.00 .* 21\\.00 .* 0\\.200 +java worse .*"), cold);
        assertFalse(txt.contains("connect_rate"), txt);
        assertEquals(3, Files.readAllLines(dir.resolve("summary.csv")).size());
        BufferedImage img = png(dir.resolve("plot.png"));
        assertEquals(2 * Plot.PANEL_W, img.getWidth());
    }

    /** As scripts/jmh-vs-c leaves it: JMH's -rf csv and the C loop's rounds before and after. */
    @Test
    void jmhAgainstTheCLoopsMedian(@TempDir Path dir) throws IOException {
        String b = "\"org.rdmapanama.bench.jmh.VerbsBenchmark.";
        write(dir.resolve("jmh.csv"),
                "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\",\"Score Error (99.9%)\",\"Unit\",\"Param: device\"",
                b + "pollEmptyCq\",\"avgt\",1,5,51.400000,1.2,\"ns/op\",rxe0",
                b + "pollEmptyCq:gc.alloc.rate\",\"avgt\",1,5,0.001,NaN,\"MB/sec\",rxe0",
                b + "pollEmptyCq:gc.alloc.rate.norm\",\"avgt\",1,5,0.000123,0.0001,\"B/op\",rxe0",
                b + "postRecv\",\"avgt\",1,5,90.000000,2.5,\"ns/op\",rxe0",
                b + "postRecv:gc.alloc.rate.norm\",\"avgt\",1,5,0.5,0.1,\"B/op\",rxe0",
                b + "pollEmptyCqConfined\",\"avgt\",1,5,30.750000,0.8,\"ns/op\",rxe0");
        write(dir.resolve("c-before.txt"), "pollEmptyCq 20.0", "postRecv 60.0", "pollEmptyCq 21.0", "postRecv 61.0");
        write(dir.resolve("c-after.txt"), "pollEmptyCq 19.0", "postRecv 59.0", "pollEmptyCq 22.0", "postRecv nan",
                "postSendPoll 300.0");
        Result r = run(dir.toString());
        assertEquals(0, r.status(), r.err());
        String txt = Files.readString(dir.resolve("summary.txt"));
        assertEquals(txt, r.out());
        // C rounds 19, 20, 21, 22 -> 20.5; 51.4 / 20.5 = 2.51
        assertTrue(line(txt, "pollEmptyCq").matches("pollEmptyCq +51\\.4 +1\\.2 +20\\.5 +2\\.51 +0\\.000 +\\[19\\.0\\.\\.22\\.0] \\(n=4\\)"), txt);
        // postRecv: "nan" is not a round; 59, 60, 61 -> 60
        assertTrue(line(txt, "postRecv").matches("postRecv +90\\.0 +2\\.5 +60\\.0 +1\\.50 +0\\.500 +\\[59\\.0\\.\\.61\\.0] \\(n=3\\)"), txt);
        // The confined variant of a call is compared with the same C twin: 30.75 / 20.5 = 1.50.
        assertTrue(line(txt, "pollEmptyCqConfined").matches("pollEmptyCqConfined +30\\.8 +0\\.8 +20\\.5 +1\\.50 +- .*"), txt);
        // Only in the C loop (JMH_ARGS filtered it out): no Java figure, no ratio.
        assertTrue(line(txt, "postSendPoll").matches("postSendPoll +- +- +300\\.0 +- +- +\\[300\\.0\\.\\.300\\.0] \\(n=1\\)"), txt);
        assertEquals(List.of("benchmark,java_ns_op,java_error,c_n,c_median,c_min,c_max,java_over_c,alloc_b_op",
                        "pollEmptyCq,51.4000,1.2000,4,20.5000,19.0000,22.0000,2.5073,0.0001",
                        "postRecv,90.0000,2.5000,3,60.0000,59.0000,61.0000,1.5000,0.5000",
                        "pollEmptyCqConfined,30.7500,0.8000,4,20.5000,19.0000,22.0000,1.5000,",
                        "postSendPoll,,,1,300.0000,300.0000,300.0000,,"),
                Files.readAllLines(dir.resolve("summary.csv")));
    }

    /**
     * scripts/jmh-vs-c's layout now: each benchmark against the C rounds around its own run
     * (c/BENCHMARK.txt), not the whole run's, as the machine's speed drifts between them.
     */
    @Test
    void eachBenchmarkAgainstTheCRoundsAroundItsOwnRun(@TempDir Path dir) throws IOException {
        String b = "\"org.rdmapanama.bench.jmh.VerbsBenchmark.";
        write(dir.resolve("jmh.csv"),
                "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\",\"Score Error (99.9%)\",\"Unit\",\"Param: device\"",
                b + "pollEmptyCq\",\"avgt\",1,5,100.000000,1.0,\"ns/op\",rxe0",
                b + "pollEmptyCqConfined\",\"avgt\",1,5,120.000000,2.0,\"ns/op\",rxe0",
                b + "nativeCallBound\",\"avgt\",1,5,30.000000,1.0,\"ns/op\",rxe0");
        Files.createDirectories(dir.resolve("c"));
        // A fast machine around the first run, a slow one around the second.
        write(dir.resolve("c/pollEmptyCq.txt"), "nativeCall 12.0", "pollEmptyCq 50.0", "pollEmptyCq 50.0",
                "pollEmptyCq 51.0", "pollEmptyCq 49.0");
        write(dir.resolve("c/pollEmptyCqConfined.txt"), "pollEmptyCq 80.0", "pollEmptyCq 80.0");
        write(dir.resolve("c/nativeCallBound.txt"), "nativeCall 15.0", "pollEmptyCq 50.0");
        Result r = run(dir.toString());
        assertEquals(0, r.status(), r.err());
        String txt = Files.readString(dir.resolve("summary.txt"));
        assertTrue(line(txt, "pollEmptyCq").matches("pollEmptyCq +100\\.0 +1\\.0 +50\\.0 +2\\.00 .*\\(n=4\\)"), txt);
        assertTrue(line(txt, "pollEmptyCqConfined").matches("pollEmptyCqConfined +120\\.0 +2\\.0 +80\\.0 +1\\.50 .*"), txt);
        // The bound call's twin is nativeCall, from its own file.
        assertTrue(line(txt, "nativeCallBound").matches("nativeCallBound +30\\.0 +1\\.0 +15\\.0 +2\\.00 .*\\(n=1\\)"), txt);

        Files.delete(dir.resolve("c/nativeCallBound.txt"));
        Result missing = run(dir.toString());
        assertEquals(1, missing.status());
        assertTrue(missing.err().contains("nativeCallBound.txt is missing"), missing.err());
    }

    @Test
    void aDirectoryWithoutResultsOrAWrongHeaderFailsNamingTheFile(@TempDir Path dir) throws IOException {
        Result r = run(dir.toString());
        assertEquals(1, r.status());
        assertTrue(r.err().contains("has neither raw.csv nor jmh.csv"), r.err());

        write(dir.resolve("raw.csv"), "a,b,c", "1,2,3");
        r = run(dir.toString());
        assertEquals(1, r.status());
        assertTrue(r.err().contains("raw.csv: not the columns of bench-vs-perftest, scale-vs-ucmatose or transport-shootout"), r.err());

        // Told the kind, it names the missing column.
        r = run("--kind=perftest", dir.toString());
        assertEquals(1, r.status());
        assertTrue(r.err().contains("no column 'device'"), r.err());
    }

    @Test
    void onlyTheHeaderMeansNoPlotAndAFailure(@TempDir Path dir) throws IOException {
        write(dir.resolve("raw.csv"), "device,transport,test,bytes,side,round,metric,value,unit",
                "rxe0,RoCEv2,write_lat,2,native,1,t_typical,inf,usec");
        Result r = run(dir.toString());
        assertEquals(1, r.status());
        assertTrue(r.err().contains("has no measured value"), r.err());
        assertFalse(Files.exists(dir.resolve("plot.png")));
    }

    @Test
    void usageErrorsAndHelp() {
        Result r = run();
        assertEquals(2, r.status());
        assertTrue(r.err().contains("DIR"), r.err());
        r = run("--kind=gnuplot", "x");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--kind"), r.err());
        r = run("--help");
        assertEquals(0, r.status());
        assertTrue(r.out().contains("Usage: rdma-bench report"), r.out());
    }
}
