package org.rdmapanama.bench;

import org.rdmapanama.device.Port;
import org.rdmapanama.Access;
import org.rdmapanama.CompletionBatch;
import org.rdmapanama.MemoryRegion;
import org.rdmapanama.Opcode;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ReceiveRequest;
import org.rdmapanama.RemoteBuffer;
import org.rdmapanama.SendRequest;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code rdma-bench scale}: many rdma_cm connections between two processes,
 * and a connect/disconnect soak that reports memory.
 * <pre>
 *   scale server -a ADDR [-p PORT] [-c N] [-t T]  accept N connections, check each one's Write and Send
 *   scale client -a ADDR [-p PORT] [-c N] [-t T]  open N connections, T at a time; one RDMA Write + one Send each, close
 *   scale cycles -a ADDR [-n N]               N connect/write/disconnect cycles in this process;
 *                                             RSS, rdma res and (with -XX:NativeMemoryTracking=summary) NMT figures
 * </pre>
 * The client prints the connection rate (connections/s from the first
 * resolve to the last ESTABLISHED), and the total time with data and close,
 * to compare with {@code ucmatose -c N}.
 */
final class ScaleCommand {
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
        int threads = 16;
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
            super(1, 1024);
        }
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            usage(err);
            return Main.USAGE;
        }
        Flags f = new Flags();
        try {
            if (!CliArgs.parse(f, args)) {
                usage(out);
                return Main.OK;
            }
            if (f.addr == null) {
                throw new IllegalArgumentException("-a ADDR is required (rdma_cm picks the device by address)");
            }
            if (!List.of("server", "client", "cycles").contains(f.mode)) {
                throw new IllegalArgumentException("unknown mode '" + f.mode + "'; expected server, client or cycles");
            }
        } catch (IllegalArgumentException e) {
            err.println("rdma-bench scale: " + e.getMessage());
            usage(err);
            return Main.USAGE;
        }
        int count = f.count != null ? f.count : f.mode.equals("cycles") ? 1000 : 256;
        try {
            InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(f.addr), f.port);
            return switch (f.mode) {
                case "server" -> server(at, count, f.threads, out);
                case "client" -> client(at, count, f.threads, out);
                default -> cycles(at, count, out);
            };
        } catch (Exception e) {
            err.println("rdma-bench scale " + f.mode + ": " + e.getMessage());
            return Main.FAILED;
        }
    }

    private static void usage(PrintStream s) {
        s.println("usage: rdma-bench scale server|client -a ADDR [-p PORT] [-c CONNECTIONS] [-t THREADS]");
        s.println("       (-t: connections set up at once, default 16; ucmatose sets up all at once)");
        s.println("       rdma-bench scale cycles -a ADDR [-n CYCLES]");
    }

    static int server(InetSocketAddress at, int count, int threads, PrintStream out) throws Exception {
        RdmaConnection[] conns = new RdmaConnection[count];
        MemoryRegion[] mrs = new MemoryRegion[count];
        ExecutorService accepting = Executors.newFixedThreadPool(threads);
        try (RdmaListener listener = RdmaListener.bind(at, Math.min(count, 1024), OPTIONS);
             CompletionBatch batch = new CompletionBatch(1)) {
            out.println("scale server: listening on " + at + " for " + count + " connections");
            List<Future<?>> accepts = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                RdmaConnection c = listener.accept(Duration.ofMinutes(5));
                if (c == null) {
                    throw new RdmaException("no connection " + i + " within 5 minutes");
                }
                conns[i] = c;
                MemoryRegion mr = c.protectionDomain().allocate(128, Access.REMOTE_WRITE);
                mrs[i] = mr;
                try (ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1)) {
                    c.queuePair().postRecv(recv.wrId(i).sge(mr, 64, 8));
                }
                // The wait for ESTABLISHED happens elsewhere, so the next request is taken at once.
                accepts.add(accepting.submit(() -> {
                    c.accept(mr.remote().toBytes(), T);
                    return null;
                }));
            }
            for (Future<?> f : accepts) {
                f.get(T.toSeconds(), TimeUnit.SECONDS);
            }
            int verified = 0;
            java.util.BitSet seen = new java.util.BitSet(count);
            for (int i = 0; i < count; i++) {
                RdmaConnection c = conns[i];
                if (c.completionQueue().pollUntil(batch, T) != 1) {
                    throw new RdmaException("no Send on connection " + i);
                }
                batch.requireSuccess(0);
                // The client tags each connection with its own number: a mix-up between QPs shows here.
                long sent = mrs[i].segment().get(JAVA_LONG, 64), written = mrs[i].segment().get(JAVA_LONG, 0);
                if (sent != written || (sent & ~0xffffffffL) != TAG || batch.wrId(0) != i) {
                    throw new RdmaException("connection " + i + ": wrote 0x" + Long.toHexString(written) + ", sent 0x"
                            + Long.toHexString(sent) + ", completion for receive " + batch.wrId(0));
                }
                int from = (int) (sent - TAG);
                if (from >= count || seen.get(from)) {
                    throw new RdmaException("connection " + i + " carries the client's number " + from + " twice or out of 0.."
                            + (count - 1));
                }
                seen.set(from);
                verified++;
            }
            for (RdmaConnection c : conns) {
                if (!c.awaitDisconnect(T)) {
                    throw new RdmaException("no disconnect from " + c);
                }
            }
            out.println("scale server: " + verified + " connections, data verified on each, all disconnected");
            return Main.OK;
        } finally {
            accepting.shutdownNow();
            for (RdmaConnection c : conns) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    static int client(InetSocketAddress at, int count, int threads, PrintStream out) throws Exception {
        RdmaConnection[] conns = new RdmaConnection[count];
        long[] resolving = new long[count], connecting = new long[count];
        ExecutorService connectors = Executors.newFixedThreadPool(threads);
        try (CompletionBatch batch = new CompletionBatch(1)) {
            // Connection 0 alone and untimed: it pays for loading librdmacm and linking every downcall.
            long warm = System.nanoTime();
            open(at, conns, 0, resolving, connecting);
            long start = System.nanoTime();
            List<Future<?>> opens = new ArrayList<>();
            for (int i = 1; i < count; i++) {
                int n = i;
                opens.add(connectors.submit(() -> {
                    open(at, conns, n, resolving, connecting);
                    return null;
                }));
            }
            for (Future<?> f : opens) {
                f.get(T.toSeconds(), TimeUnit.SECONDS);
            }
            long connected = System.nanoTime();
            for (int i = 0; i < count; i++) {
                RdmaConnection c = conns[i];
                RemoteBuffer peer = RemoteBuffer.fromBytes(c.peerPrivateData());
                MemoryRegion mine = c.protectionDomain().allocate(64);
                mine.segment().set(JAVA_LONG, 0, TAG + i);
                try (SendRequest wr = c.queuePair().newSendRequest(1, 1)) {
                    c.queuePair().postSend(wr.opcode(0, Opcode.RDMA_WRITE).sge(mine, 0, 8).remote(peer.at(0, 8), peer.rkey()));
                    if (c.completionQueue().pollUntil(batch, T) != 1) {
                        throw new RdmaException("no completion for the write on connection " + i);
                    }
                    batch.requireSuccess(0);
                    c.queuePair().postSend(wr.opcode(0, Opcode.SEND).sge(mine, 0, 8));
                    if (c.completionQueue().pollUntil(batch, T) != 1) {
                        throw new RdmaException("no completion for the send on connection " + i);
                    }
                    batch.requireSuccess(0);
                }
            }
            long data = System.nanoTime();
            for (int i = 0; i < count; i++) {
                conns[i].close();
                conns[i] = null;
            }
            long end = System.nanoTime();
            out.printf("scale client: first connection (loads and links librdmacm) %.3f s%n", (start - warm) / 1e9);
            out.printf("scale client: %d more connections, %d at a time, established in %.3f s: %.1f connections/s%n",
                    count - 1, threads, (connected - start) / 1e9, (count - 1) / ((connected - start) / 1e9));
            out.printf("scale client: per connection, resolve (address, route, PD, CQ, QP) %s; connect %s%n",
                    spread(resolving, 1), spread(connecting, 1));
            out.printf("scale client: one RDMA Write + one Send each in %.3f s; closed all in %.3f s; "
                            + "from the second connection to the last close %.3f s%n",
                    (data - connected) / 1e9, (end - data) / 1e9, (end - start) / 1e9);
            return Main.OK;
        } finally {
            connectors.shutdownNow();
            for (RdmaConnection c : conns) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    private static void open(InetSocketAddress at, RdmaConnection[] conns, int i, long[] resolving, long[] connecting)
            throws Exception {
        long t0 = System.nanoTime();
        RdmaConnection c = RdmaConnection.resolve(at, null, OPTIONS, T);
        conns[i] = c;
        long t1 = System.nanoTime();
        c.connect(new byte[0], T);
        resolving[i] = t1 - t0;
        connecting[i] = System.nanoTime() - t1;
    }

    /** "median X ms (min .. max)" of nanosecond durations, from index {@code from} on. */
    static String spread(long[] ns, int from) {
        long[] s = java.util.Arrays.copyOfRange(ns, from, ns.length);
        if (s.length == 0) {
            return "-";
        }
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
        return Main.OK;
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
