package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.CliArgs;
import org.rdmapanama.bench.JitActivity;
import org.rdmapanama.bench.perftest.PerftestOptions.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;

/**
 * {@code rdma-bench write_lat | read_lat | send_lat | atomic_lat | write_bw |
 * read_bw | send_bw}: perftest's tests, flags and report format on
 * rdma-panama. Server without an address, client with one.
 * <p>
 * A run is: {@link PerftestLink} connects the two ends; {@link PerftestHeader}
 * prints perftest's description; then, for each size, a barrier in the
 * {@link PerftestControl} area and the {@link PerftestLatency} or
 * {@link PerftestBandwidth} loop, which returns its row. Unreported warm-up
 * rounds of the same loops come first, until both JITs are idle.
 * <p>
 * Timed loops reuse pre-built work requests and a pre-allocated timestamp
 * array; they allocate nothing. Every wait has a deadline.
 * One thread owns a run; nothing here is shared.
 */
public final class PerftestCommand {
    private PerftestCommand() {}

    public static int run(String command, String[] args, PrintStream out, PrintStream err) {
        Test test = Test.of(command);
        return CliArgs.run(command, args, out, err, a -> PerftestOptions.parse(test, a),
                s -> PerftestOptions.usage(test, s), o -> {
                    try (PerftestLink link = new PerftestLink(o, out, err)) {
                        link.connect();
                        PerftestPath path = link.path();
                        PerftestHeader.print(out, path);
                        new Run(path, out, err).runAll();
                        return CliArgs.OK;
                    }
                });
    }

    /** The rounds of one connected run: warm-up, the reported sizes, the final barrier. */
    private static final class Run implements PerftestRound.Pace {
        private final PerftestOptions o;
        private final PerftestPath link;
        private final PerftestRound round;
        private final PerftestControl control;
        private final PrintStream out;
        private final PrintStream err;

        Run(PerftestPath link, PrintStream out, PrintStream err) {
            this.o = link.options();
            this.link = link;
            this.out = out;
            this.err = err;
            int n = o.duration == null ? o.iters * link.lanes().length : 1; // -q: a timestamp per WR of every QP
            this.round = new PerftestRound(link, n);
            this.control = round.control();
        }

        void runAll() throws IOException {
            int[] sizes = o.sizes();
            if (link.warmup()) {
                warmUp(sizes); // against native perftest it ran before our QP existed (PerftestLoopback)
            } else if (o.duration != null && o.warmupMaxSeconds > 0 && PerftestLoopback.role(o.test, link.server()) != null) {
                // A duration run has only perftest's 2 s margin, no rounds until the JIT is idle: say so rather
                // than let a figure taken while C2 still compiles pass for a warm one.
                err.println(o.who() + ": -D runs only perftest's 2 s margin, not the warm-up until the JIT is idle, "
                        + "so the JIT may still compile during the measured time; compare with -n");
            }
            // The column header comes after the warm-up's stderr line, right above its rows, as perftest's.
            boolean rows = PerftestHeader.printsRows(o);
            if (rows) {
                out.println(PerftestHeader.columns(o));
            }
            round.run(sizes, this, out);
            long timeout = control.phaseTimeout(sizes[sizes.length - 1]);
            if (link.nativePeer()) {
                new PerftestNativeEnd(link, round.bandwidth(), Duration.ofNanos(timeout)).finish(out);
            } else {
                control.barrier(timeout);
            }
            if (rows) {
                out.println(PerftestRows.RESULT_LINE);
            }
        }

        /**
         * Same loops, same peer, rows thrown away, round after round until the JIT on both sides has
         * been idle for {@link JitActivity#QUIET_NANOS}: C2 compiles them here, not during the reported run.
         */
        private void warmUp(int[] sizes) throws IOException {
            PrintStream none = new PrintStream(OutputStream.nullOutputStream());
            long start = System.nanoTime();
            long max = Duration.ofSeconds(o.warmupMaxSeconds).toNanos();
            JitActivity.Watch jit = new JitActivity.Watch(start);
            long timeout = control.phaseTimeout(sizes[sizes.length - 1]); // a passive side waits out the peer's round
            int rounds = 0;
            boolean more;
            round.warming(true);
            try {
                do {
                    round.run(sizes, this, none);
                    rounds++;
                    long now = System.nanoTime();
                    boolean busy = jit.busy(now), capped = now - start >= max;
                    more = control.agree(busy, capped, timeout);
                } while (more);
            } finally {
                round.warming(false);
            }
            // One println, one write: a server and a client sharing a terminal print theirs at once.
            err.println(String.format("%s warm-up: %d rounds in %.1f s (until the JIT is idle for %d s on both sides, "
                    + "at most %d s)", o.who(), rounds, (System.nanoTime() - start) / 1e9,
                    JitActivity.QUIET_NANOS / 1_000_000_000, o.warmupMaxSeconds));
        }

        @Override
        public void beforeSize(int size) throws IOException {
            if (link.nativePeer()) {
                // perftest's Send tests shake hands before each size (their receives are posted then);
                // the other tests run their sizes back to back.
                if (o.test.verb == PerftestOptions.Verb.SEND) {
                    link.exchange().handshake(link.lanes()[0].keys(), Duration.ofNanos(control.phaseTimeout(size)));
                }
            } else {
                // The peer's writes land in [slot, 2 slot); a byte left from the warm-up run
                // must not look like this run's first write. The peer writes again only after the barrier.
                link.mem().asSlice(link.slot(), link.slot()).fill((byte) 0);
                control.barrier(control.phaseTimeout(size));
            }
        }

        @Override
        public void afterSize(int size) throws IOException {
            if (link.nativePeer() && o.test == Test.SEND_BW && o.allSizes) {
                link.exchange().handshake(link.lanes()[0].keys(), Duration.ofNanos(control.phaseTimeout(size)));
            }
        }
    }
}
