package org.rdmapanama.bench.scale;

import org.rdmapanama.bench.CliArgs;

import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.RemoteBuffer;
import org.rdmapanama.verbs.SendRequest;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code rdma-bench scale}: many rdma_cm connections between two processes,
 * and a connect/disconnect soak that reports memory.
 * <pre>
 *   scale server -a ADDR [-p PORT] [-c N] [--batches B]  B times: accept N connections, check each one's Write and Send
 *   scale client -a ADDR [-p PORT] [-c N] [-t W] [--batches B]  B times: open N connections, W at a time (default
 *                                             all); one RDMA Write + one Send each; close all (see {@link ScaleSessions})
 *   scale cycles -a ADDR [-n N]               N connect/write/disconnect cycles in this process;
 *                                             RSS, rdma res and (with -XX:NativeMemoryTracking=summary) NMT figures
 * </pre>
 * The client prints each batch's session rate (N over the time from the
 * first resolve to the last close), and the first batch's from the process's
 * exec, to compare with {@code ucmatose -c N -C 1}.
 */
public final class ScaleCommand {
    private ScaleCommand() {}

    static final Duration T = Duration.ofSeconds(60);
    /** Small queues: 256 connections each get a QP and a CQ. */
    static final ConnectionOptions OPTIONS = new ConnectionOptions(4, 4, 1, 1, 0, 8, 1, 7, 7);
    static final long TAG = 0x5ca1e00000000000L;

    /** The command line: a mode, then its flags. */
    static final class Flags {
        @Parameters(index = "0", arity = "0..1")
        String mode;
        @Option(names = "-a")
        String addr;
        @Option(names = "-p", converter = CliArgs.Port.class)
        int port = 7480;
        @Option(names = {"-c", "-n"}, converter = Count.class)
        Integer count;
        @Option(names = "-t", converter = Threads.class)
        Integer window;
        @Option(names = "--batches", converter = Batches.class)
        int batches = 1;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    static final class Count extends CliArgs.Range {
        Count() {
            super(1, 1_000_000);
        }
    }

    static final class Threads extends CliArgs.Range {
        Threads() {
            super(1, 1_000_000);
        }
    }

    static final class Batches extends CliArgs.Range {
        Batches() {
            super(1, 1000);
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("scale", args, out, err, ScaleCommand::parse, ScaleCommand::usage, f -> {
            int count = f.count != null ? f.count : f.mode.equals("cycles") ? 1000 : 256;
            try {
                InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(f.addr), f.port);
                return switch (f.mode) {
                    case "server" -> ScaleSessions.server(at, count, f.batches, out);
                    case "client" -> ScaleSessions.client(at, count, f.window != null ? f.window : count, f.batches, out);
                    default -> cycles(at, count, out);
                };
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                err.println("rdma-bench scale " + f.mode + ": " + e.getMessage());
                return CliArgs.exitStatus(e);
            }
        });
    }

    /** The flags, or null for {@code -h}; throws IllegalArgumentException with a one-line reason. */
    static Flags parse(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("a mode is required: server, client or cycles");
        }
        Flags f = new Flags();
        if (!CliArgs.parse(f, args)) {
            return null;
        }
        if (f.addr == null) {
            throw new IllegalArgumentException("-a ADDR is required (rdma_cm picks the device by address)");
        }
        if (!List.of("server", "client", "cycles").contains(f.mode)) {
            throw new IllegalArgumentException("unknown mode '" + f.mode + "'; expected server, client or cycles");
        }
        return f;
    }

    private static void usage(PrintStream s) {
        s.println("usage: rdma-bench scale server|client -a ADDR [-p PORT] [-c CONNECTIONS] [-t WINDOW] [--batches B]");
        s.println("       (-t: connections being set up at once, default all, as ucmatose does;");
        s.println("        --batches: B rounds of CONNECTIONS in one process, the first cold, the rest warm; both sides alike)");
        s.println("       rdma-bench scale cycles -a ADDR [-n CYCLES]");
    }

    /** "median X ms (min .. max)" of nanosecond durations. */
    static String spread(long[] ns) {
        if (ns.length == 0) {
            return "-";
        }
        long[] s = ns.clone();
        java.util.Arrays.sort(s);
        return String.format("median %.2f ms (%.2f .. %.2f)", s[s.length / 2] / 1e6, s[0] / 1e6, s[s.length - 1] / 1e6);
    }

    static int cycles(InetSocketAddress base, int n, PrintStream out) throws Exception {
        int warmup = Math.max(1, Math.min(n / 10, 200));
        out.println("scale cycles: " + n + " connect/write/disconnect cycles on " + base.getAddress().getHostAddress()
                + ", warm-up " + warmup);
        report(out, "start", 0);
        long start = System.nanoTime();
        try (RdmaListener listener = RdmaListener.bind(base, 4, ConnectionOptions.defaults());
             CompletionBatch batch = new CompletionBatch(1)) {
            for (int i = 0; i < n; i++) {
                cycle(listener, base, i, batch);
                if (i + 1 == warmup) {
                    report(out, "after warm-up", i + 1);
                } else if ((i + 1) % 1000 == 0) {
                    out.printf("  %d cycles, %.1f ms/cycle, RSS %d kB%n", i + 1,
                            (System.nanoTime() - start) / 1e6 / (i + 1), rssKb());
                }
            }
        }
        out.printf("scale cycles: %d cycles in %.1f s (%.1f ms/cycle)%n", n, (System.nanoTime() - start) / 1e9,
                (System.nanoTime() - start) / 1e6 / n);
        report(out, "end", n);
        return CliArgs.OK;
    }

    private static void cycle(RdmaListener listener, InetSocketAddress at, int i, CompletionBatch batch) throws Exception {
        CompletableFuture<RdmaConnection> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                RdmaConnection c = listener.accept(T);
                MemoryRegion mr = c.protectionDomain().allocate(4096, Access.REMOTE_WRITE);
                c.accept(mr.remote().toBytes(), T);
                return c;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        RdmaConnection server = null;
        try (RdmaConnection c = RdmaConnection.resolve(at, null, ConnectionOptions.defaults(), T)) {
            MemoryRegion mine = c.protectionDomain().allocate(4096);
            c.connect(new byte[0], T);
            server = accepted.get(60, TimeUnit.SECONDS);
            RemoteBuffer peer = RemoteBuffer.fromBytes(c.peerPrivateData());
            mine.segment().set(JAVA_LONG, 0, TAG + i);
            try (SendRequest wr = c.queuePair().newSendRequest(1, 1)) {
                c.queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(mine, 0, 64).remote(peer.at(0, 64), peer.rkey()));
                if (c.completionQueue().pollUntil(batch, T) != 1) {
                    throw new RdmaException("cycle " + i + ": no completion");
                }
                batch.requireSuccess(0);
            }
            c.disconnect();
            if (!server.awaitDisconnect(T)) {
                throw new RdmaException("cycle " + i + ": the server side saw no disconnect");
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    static long rssKb() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        return -1;
    }

    private static void report(PrintStream out, String when, int cycles) throws Exception {
        System.gc();
        out.printf("  [%s, %d cycles] RSS %d kB; rdma res: %s; NMT: %s%n", when, cycles, rssKb(),
                command("rdma", "res", "show").lines().filter(l -> l.contains("pd ")).map(String::strip).toList(), nmt());
    }

    /** The NMT summary's total and the "Other" category (FFM arenas), via jcmd; "off" without the flag. */
    private static String nmt() throws Exception {
        String pid = Long.toString(ProcessHandle.current().pid());
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        String s = command(jcmd, pid, "VM.native_memory", "summary");
        if (s.contains("not enabled")) {
            return "off (run with RDMA_JAVA_OPTS=-XX:NativeMemoryTracking=summary)";
        }
        StringBuilder b = new StringBuilder();
        Matcher total = Pattern.compile("Total: reserved=(\\d+\\w+), committed=(\\d+\\w+)(?:, malloc=(\\d+\\w+))?").matcher(s);
        if (total.find()) {
            b.append("total committed ").append(total.group(2));
            if (total.group(3) != null) {
                b.append(", malloc ").append(total.group(3));
            }
        }
        Matcher other = Pattern.compile("-\\s+Other \\(reserved=(\\d+\\w+), committed=(\\d+\\w+)\\)").matcher(s);
        if (other.find()) {
            b.append(", Other (FFM) committed ").append(other.group(2));
        }
        return b.isEmpty() ? s.strip() : b.toString();
    }

    private static String command(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(60, TimeUnit.SECONDS);
        return s;
    }
}
