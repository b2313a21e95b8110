package org.rdmapanama.bench.scale;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.device.RdmaConfig;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;

/**
 * {@code rdma-bench channel_scale}: many message channels between one
 * server and one client process. Each round the client opens N channels
 * (connect, and a first checksummed message echoed and checked), reports
 * the set-up rate and the registered memory per idle channel, checks every
 * channel again, and closes them all; the server echoes and reports its own
 * memory per channel. The device is the one RdmaConfig selects
 * ({@code RDMA_DEVICE=rxe0}, ...).
 */
public final class ChannelScaleCommand {
    private ChannelScaleCommand() {}

    static final class Flags {
        @Parameters(index = "0", arity = "0..1")
        String mode;
        @Parameters(index = "1", arity = "0..1")
        String addr;
        @Option(names = "-p", converter = CliArgs.Port.class)
        int port = 7490;
        @Option(names = "-c", converter = ScaleCommand.Count.class)
        int count = 256;
        @Option(names = "-w", converter = Window.class)
        int window = 4;
        @Option(names = "-s", converter = Slot.class)
        int slot = 4096;
        @Option(names = "--srq", converter = Srq.class)
        int srq;
        @Option(names = "-m", converter = Size.class)
        int size = 64;
        @Option(names = "-t", converter = ScaleCommand.Threads.class)
        int parallel = 32;
        @Option(names = "--rounds", converter = ScaleCommand.Batches.class)
        int rounds = 1;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    static final class Window extends CliArgs.Range {
        Window() {
            super(3, 4096);
        }
    }

    static final class Slot extends CliArgs.Range {
        Slot() {
            super(256, 1 << 24);
        }
    }

    static final class Srq extends CliArgs.Range {
        Srq() {
            super(0, 1 << 24);
        }
    }

    static final class Size extends CliArgs.Range {
        Size() {
            super(8, 1 << 20);
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("channel_scale", args, out, err, ChannelScaleCommand::parse, ChannelScaleCommand::usage,
                f -> f.mode.equals("server") ? server(f, out) : client(f, out));
    }

    static Flags parse(String[] args) {
        Flags f = new Flags();
        if (!CliArgs.parse(f, args)) {
            return null;
        }
        if (f.mode == null || !List.of("server", "client").contains(f.mode)) {
            throw new IllegalArgumentException("a mode is required: server or client, got " + f.mode);
        }
        if (f.mode.equals("client") && f.addr == null) {
            throw new IllegalArgumentException("client needs the server's ADDR");
        }
        if (Integer.bitCount(f.slot) != 1) {
            throw new IllegalArgumentException("-s must be a power of two, got " + f.slot);
        }
        if (f.srq != 0 && f.srq < f.window + 2) {
            throw new IllegalArgumentException("--srq must be 0 or at least -w + 2 = " + (f.window + 2));
        }
        return f;
    }

    private static void usage(PrintStream s) {
        s.println("usage: rdma-bench channel_scale server [-p PORT] [-c N] [-w WINDOW] [-s SLOT] [--srq DEPTH] [--rounds R]");
        s.println("       rdma-bench channel_scale client ADDR [-p PORT] [-c N] [-w WINDOW] [-s SLOT] [--srq DEPTH]");
        s.println("                                       [-m BYTES] [-t PARALLEL] [--rounds R]");
        s.println("  -c N channels a round (256); -w window (4) and -s slot size (4096): (w + 2) x s registered per");
        s.println("  idle channel; --srq DEPTH: one shared receive queue per loop of DEPTH receives (0: none; needs");
        s.println("  DEPTH >= N x (w + 2)); -m first-message bytes (64); -t set-ups at once (32); --rounds R: the first");
        s.println("  cold, the rest warm. The device: RDMA_DEVICE / RDMA_TRANSPORT. The server ends after R rounds.");
    }

    static ChannelOptions options(Flags f) {
        int sqDepth = 2 * f.window + 8;
        int cq = (int) Math.min(1 << 22, Math.max(16384L, (long) f.count * (f.window + 2 + sqDepth) + 64));
        return ChannelOptions.defaults().withWindow(f.window).withSlotSize(f.slot).withSharedReceives(f.srq)
                .withCqSize(cq).withMaxMessageSize(Math.max(f.size, 1 << 20)).withSendQueueLimit(64);
    }

    private static int server(Flags f, PrintStream out) throws Exception {
        try (ChannelGroup group = ChannelGroup.open(RdmaConfig.load(), options(f));
             ChannelServer s = group.listen(f.port, (ch, m) -> {
                 MessageBuffer reply = ch.allocate(m.length());
                 MemorySegment.copy(m.segment(), 0, reply.segment(), 0, m.length());
                 m.release();
                 ch.send(reply, m.length());
             })) {
            out.println("channel_scale server on " + s.address() + " (" + group.selection().device().name() + ", "
                    + describe(options(f)) + ")");
            out.flush();
            int peak = 0;
            int rounds = 0;
            int last = -1;
            while (rounds < f.rounds) {
                Thread.sleep(200);
                int n = group.channelCount();
                if (n > peak) {
                    peak = n;
                }
                if (n != last && n == peak && n > 0) {
                    out.printf("server: %d channels, %d bytes registered, %d per channel%n", n,
                            group.registeredBytes(), group.registeredBytes() / n);
                    out.flush();
                }
                last = n;
                if (n == 0 && peak > 0) {
                    rounds++;
                    out.printf("server: round %d done (%d channels at most), %d bytes registered%n", rounds, peak,
                            group.registeredBytes());
                    out.flush();
                    peak = 0;
                }
            }
        }
        return CliArgs.OK;
    }

    static String describe(ChannelOptions o) {
        return "window " + o.window() + ", slot " + o.slotSize() + " B, "
                + (o.sharesReceives() ? "SRQ of " + o.sharedReceives() : "no SRQ");
    }

    /** One channel's expected echo: its first message's bytes, a pattern with its number and a CRC32C. */
    static byte[] payload(int channel, int round, int size) {
        byte[] b = new byte[size];
        for (int i = 8; i < size; i++) {
            b[i] = (byte) (i * 131 + channel * 7 + round);
        }
        ByteBufferish.putInt(b, 0, channel);
        CRC32C crc = new CRC32C();
        crc.update(b, 8, size - 8);
        ByteBufferish.putInt(b, 4, (int) crc.getValue());
        return b;
    }

    private static final class ByteBufferish {
        static void putInt(byte[] b, int at, int v) {
            b[at] = (byte) (v >>> 24);
            b[at + 1] = (byte) (v >>> 16);
            b[at + 2] = (byte) (v >>> 8);
            b[at + 3] = (byte) v;
        }
    }

    /** A channel of the client and the echo it waits for. */
    private static final class Probe {
        final int index;
        volatile byte[] expected;
        volatile CompletableFuture<Void> echoed = new CompletableFuture<>();
        MessageChannel channel;

        Probe(int index) {
            this.index = index;
        }

        void onMessage(Message m) {
            byte[] want = expected;
            CompletableFuture<Void> e = echoed;
            try {
                if (m.length() != want.length) {
                    e.completeExceptionally(new IllegalStateException("channel " + index + ": echo of "
                            + m.length() + " bytes, sent " + want.length));
                } else if (MemorySegment.ofArray(want).mismatch(m.segment().asSlice(0, m.length())) >= 0) {
                    e.completeExceptionally(new IllegalStateException("channel " + index + ": the echo differs"
                            + " from what was sent (checksum " + Integer.toHexString(
                                    m.segment().get(JAVA_INT_UNALIGNED, 4)) + ")"));
                } else {
                    e.complete(null);
                }
            } finally {
                m.release();
            }
        }

        CompletableFuture<Void> send(int round, int size) {
            expected = payload(index, round, size);
            echoed = new CompletableFuture<>();
            try {
                MessageBuffer b = channel.allocate(size);
                MemorySegment.copy(expected, 0, b.segment(), JAVA_BYTE, 0, size);
                channel.send(b, size);
            } catch (Exception e) {
                echoed.completeExceptionally(e);
            }
            return echoed;
        }
    }

    private static int client(Flags f, PrintStream out) throws Exception {
        long exec = ProcessHandle.current().info().startInstant().map(i -> i.toEpochMilli()).orElse(0L);
        ChannelOptions o = options(f);
        InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(f.addr), f.port);
        try (ChannelGroup group = ChannelGroup.open(RdmaConfig.load(), o)) {
            out.println("channel_scale client: " + f.count + " channels to " + server + " on "
                    + group.selection().device().name() + " (" + describe(o) + "), " + f.parallel + " at a time, "
                    + f.rounds + " round(s)");
            double[] rates = new double[f.rounds];
            double[] setup = new double[f.rounds];
            for (int r = 0; r < f.rounds; r++) {
                long t0 = System.nanoTime();
                List<Probe> probes = open(group, server, f, r, out);
                long t1 = System.nanoTime();
                int n = probes.size();
                long reg = group.registeredBytes();
                out.printf("round %d: %d channels open, first message checked, in %.2f s: %.1f channels/s;"
                                + " client %d bytes registered, %d per idle channel%n",
                        r + 1, n, (t1 - t0) / 1e9, n / ((t1 - t0) / 1e9), reg, reg / n);
                if (r == 0 && exec > 0) {
                    out.printf("round 1 from the process's exec: %.2f s%n",
                            (System.currentTimeMillis() - exec) / 1e3);
                }
                // every channel again, all at once: its data is still right after the others opened
                List<CompletableFuture<Void>> again = new ArrayList<>();
                for (Probe p : probes) {
                    again.add(p.send(r + 1000, f.size));
                }
                CompletableFuture.allOf(again.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
                long t2 = System.nanoTime();
                for (Probe p : probes) {
                    p.channel.close();
                }
                for (Probe p : probes) {
                    p.channel.closeFuture().get(60, TimeUnit.SECONDS);
                }
                long t3 = System.nanoTime();
                long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (group.channelCount() > 0 && System.nanoTime() < wait) {
                    Thread.sleep(10);
                }
                double cycle = (t1 - t0 + t3 - t2) / 1e9;
                setup[r] = n / ((t1 - t0) / 1e9);
                rates[r] = n / cycle;
                out.printf("round %d: all %d checked again in %.2f s, closed in %.2f s; connect + first message"
                                + " + close: %.1f channels/s; %d channels left, %d bytes registered%n",
                        r + 1, n, (t2 - t1) / 1e9, (t3 - t2) / 1e9, rates[r], group.channelCount(),
                        group.registeredBytes());
                out.flush();
            }
            if (f.rounds > 1) {
                double[] warm = Arrays.copyOfRange(rates, 1, rates.length);
                Arrays.sort(warm);
                double[] warmSetup = Arrays.copyOfRange(setup, 1, setup.length);
                Arrays.sort(warmSetup);
                out.printf("warm (rounds 2..%d): median %.1f channels/s with close (%.1f..%.1f), set-up only %.1f%n",
                        f.rounds, warm[warm.length / 2], warm[0], warm[warm.length - 1],
                        warmSetup[warmSetup.length / 2]);
            }
        }
        return CliArgs.OK;
    }

    /** Opens {@code f.count} channels, {@code f.parallel} at a time, each checked by one echo; the first failure ends it. */
    private static List<Probe> open(ChannelGroup group, InetSocketAddress server, Flags f, int round, PrintStream out)
            throws Exception {
        Semaphore slots = new Semaphore(f.parallel);
        AtomicInteger done = new AtomicInteger();
        CompletableFuture<Void> failed = new CompletableFuture<>();
        List<Probe> probes = new ArrayList<>();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        long t0 = System.nanoTime();
        int step = Math.max(1, f.count / 10);
        for (int i = 0; i < f.count && !failed.isDone(); i++) {
            while (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                if (failed.isDone()) {
                    break;
                }
            }
            if (failed.isDone()) {
                break;
            }
            Probe p = new Probe(i);
            probes.add(p);
            CompletableFuture<Void> one = group.connect(server, (ch, m) -> p.onMessage(m))
                    .thenCompose(ch -> {
                        p.channel = ch;
                        return p.send(round, f.size);
                    });
            all.add(one);
            one.whenComplete((v, e) -> {
                slots.release();
                if (e != null) {
                    Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                            ? e.getCause() : e;
                    failed.completeExceptionally(new IllegalStateException("channel " + (p.index + 1) + " of "
                            + f.count + " failed after " + done.get() + " were open ("
                            + String.format("%.1f s", (System.nanoTime() - t0) / 1e9) + "): " + c, c));
                    return;
                }
                int k = done.incrementAndGet();
                if (k % step == 0 || k == f.count) {
                    out.printf("  %d of %d open, %.1f s%n", k, f.count, (System.nanoTime() - t0) / 1e9);
                    out.flush();
                }
            });
        }
        try {
            CompletableFuture.anyOf(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)), failed)
                    .get(600, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            // below: the failure names the channel and how many were open
        }
        if (failed.isDone()) {
            try {
                CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // the others settle; the first failure is what is reported
            }
            out.printf("largest count reached: %d channels open at once (%d bytes registered)%n", done.get(),
                    group.registeredBytes());
            for (Probe p : probes) {
                if (p.channel != null) {
                    p.channel.close();
                }
            }
            failed.get();
        }
        return probes;
    }
}
