package org.rdmapanama.cm;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The event-driven connection manager: one rdma_cm channel and thread per
 * {@link CmEventLoop}, asynchronous setup, close and timeouts that act at
 * once, and nothing left in the kernel ({@code rdma res show}) after a setup
 * is abandoned half-way.
 */
@Tag("device")
class CmEventLoopDeviceTest {
    static final Duration T = Duration.ofSeconds(30);
    /** siw gives a process's device context 144 pages and a connection end takes 3: both ends live here. */
    static final int N = 12;
    static final ConnectionOptions OPTS = ConnectionOptions.defaults().withDepth(4, 4);

    static InetSocketAddress where(Transport t) throws Exception {
        return new InetSocketAddress(FaultRig.addressOf(t), LabPorts.next());
    }

    static Throwable failureOf(CompletableFuture<?> f) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
        return e.getCause();
    }

    @OnEveryLabTransport
    void connectsAndAcceptsManyAtOnceFromOneThread(Transport transport) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        Set<String> threads = ConcurrentHashMap.newKeySet();
        List<RdmaConnection> all = new ArrayList<>();
        String group;
        try (CmEventLoop loop = CmEventLoop.create("cm-loop-test-" + transport)) {
            group = loop.name();
            InetSocketAddress at = where(transport);
            try (RdmaListener listener = RdmaListener.bind(at, N, OPTS, loop)) {
                List<CompletableFuture<RdmaConnection>> servers = new ArrayList<>();
                List<CompletableFuture<RdmaConnection>> clients = new ArrayList<>();
                for (int i = 0; i < N; i++) {
                    // The server answers with what the client sent, reversed.
                    servers.add(listener.acceptAsync(T).thenCompose(c -> {
                        threads.add(Thread.currentThread().getName());
                        byte[] got = c.peerPrivateData();
                        return c.acceptAsync(new byte[] {got[1], got[0]}, T);
                    }));
                }
                for (int i = 0; i < N; i++) {
                    clients.add(RdmaConnection.connectAsync(at, null, OPTS, new byte[] {(byte) i, 42}, T, loop)
                            .whenComplete((c, e) -> threads.add(Thread.currentThread().getName())));
                }
                CompletableFuture<?>[] each = new CompletableFuture<?>[2 * N];
                for (int i = 0; i < N; i++) {
                    each[i] = servers.get(i).whenComplete((c, e) -> record(all, c));
                    each[N + i] = clients.get(i).whenComplete((c, e) -> record(all, c));
                }
                CompletableFuture.allOf(each).get(120, TimeUnit.SECONDS);
                Set<Integer> seen = new HashSet<>();
                for (int i = 0; i < N; i++) {
                    RdmaConnection client = clients.get(i).join();
                    RdmaConnection server = servers.get(i).join();
                    assertTrue(client.isEstablished() && server.isEstablished());
                    // IB CM pads private data to its full size (196 bytes on accept): compare what was sent.
                    assertArrayEquals(new byte[] {42, (byte) i}, Arrays.copyOf(client.peerPrivateData(), 2), "client " + i);
                    seen.add((int) server.peerPrivateData()[0]);
                }
                assertEquals(N, seen.size(), "every request was handed over once: " + seen);
            } finally {
                for (RdmaConnection c : all) {
                    c.close();
                }
            }
        } // closing the group is refused if a connection or listener were left on it
        // Every stage ran on the group's thread, or on this one when its result was there already.
        threads.remove(Thread.currentThread().getName());
        assertEquals(Set.of(group), threads, "threads that ran setup stages");
        assertEquals(before, LeakCheck.awaitCounts(before));
    }

    private static synchronized void record(List<RdmaConnection> all, RdmaConnection c) {
        if (c != null) {
            all.add(c);
        }
    }

    @OnEveryLabTransport
    void closingMidSetupLeavesNothing(Transport transport) throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        InetSocketAddress at = where(transport);
        List<CompletableFuture<RdmaConnection>> refused = new ArrayList<>();
        RdmaListener listener = RdmaListener.bind(at, 8, OPTS);
        try {
            for (int i = 0; i < 3; i++) {
                refused.add(RdmaConnection.connectAsync(at, null, OPTS, new byte[0], T, CmEventLoop.shared()));
            }
            // A request taken but neither accepted nor rejected, then closed.
            RdmaConnection requested = listener.acceptAsync(T).get(60, TimeUnit.SECONDS);
            requested.close();
            // A connection closed while its connect waits for an answer that never comes.
            RdmaConnection waiting = RdmaConnection.resolveAsync(at, null, OPTS, T).get(60, TimeUnit.SECONDS);
            CompletableFuture<RdmaConnection> connecting = waiting.connectAsync(new byte[0], T);
            waiting.close();
            assertInstanceOf(ClosedResourceException.class, failureOf(connecting));
            // A resolve given up at once.
            CompletableFuture<RdmaConnection> resolving = RdmaConnection.resolveAsync(at, null, OPTS, T);
            if (!resolving.cancel(false) && !resolving.isCompletedExceptionally()) {
                resolving.join().close();
            }
        } finally {
            listener.close(); // refuses the requests nobody took
        }
        // An accept waiting when its listener closes fails at once.
        RdmaListener idle = RdmaListener.bind(where(transport), 1, OPTS);
        CompletableFuture<RdmaConnection> accepting = idle.acceptAsync(T);
        idle.close();
        assertInstanceOf(ClosedResourceException.class, failureOf(accepting));
        for (CompletableFuture<RdmaConnection> f : refused) {
            Throwable t = failureOf(f);
            assertInstanceOf(CmException.class, t, String.valueOf(t));
            System.out.println("CM-LOOP a client whose request the closed listener refused: " + t.getMessage());
        }
        assertEquals(before, LeakCheck.awaitCounts(before));
    }

    @OnEveryLabTransport
    void timeoutsFireOnTimeAndCloseEndsAWaitAtOnce(Transport transport) throws Exception {
        InetSocketAddress at = where(transport);
        try (RdmaListener listener = RdmaListener.bind(at, 4, OPTS)) {
            long t0 = System.nanoTime();
            assertNull(listener.accept(Duration.ofMillis(40)));
            assertNull(listener.acceptAsync(Duration.ofMillis(40)).get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - t0 >= 80_000_000L, "a timeout fired early");
            try (RdmaConnection c = RdmaConnection.resolve(at, null, OPTS, T)) {
                // The listener takes the request and never answers it.
                long t1 = System.nanoTime();
                CmException e = assertThrows(CmException.class, () -> c.connect(new byte[0], Duration.ofMillis(300)));
                long ms = (System.nanoTime() - t1) / 1_000_000;
                assertNull(e.event(), e.getMessage());
                assertTrue(e.getMessage().startsWith("timed out connecting to "), e.getMessage());
                assertTrue(ms >= 300, "timed out after " + ms + " ms");
                System.out.println("CM-LOOP connect timeout of 300 ms fired after " + ms + " ms");
            }
            RdmaConnection idle = RdmaConnection.resolve(at, null, OPTS, T);
            CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return idle.awaitEvent(Duration.ofMinutes(5)) == null ? new AssertionError("timed out") : null;
                } catch (Throwable t) {
                    return t;
                }
            });
            Thread.sleep(300);
            long t2 = System.nanoTime();
            idle.close();
            Throwable t = waiter.get(10, TimeUnit.SECONDS);
            System.out.println("CM-LOOP close ended a waiting awaitEvent after "
                    + (System.nanoTime() - t2) / 1_000 + " µs");
            assertInstanceOf(ClosedResourceException.class, t, String.valueOf(t));
        }
    }

    /**
     * Timers scheduled from another thread wake the sleeping loop only when
     * they are due before its own next wake-up; each still fires on time,
     * whichever way, and a cancelled one does not fire.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Transport.class, names = {"ROCE_V2"})
    void timersFromAnotherThreadFireOnTimeWhetherOrNotTheyWakeTheLoop(Transport transport) throws Exception {
        InetSocketAddress at = where(transport);
        try (CmEventLoop loop = CmEventLoop.create("timer-test");
             RdmaListener listener = RdmaListener.bind(at, 4, OPTS, loop)) {
            for (int round = 0; round < 3; round++) {
                CompletableFuture<RdmaConnection> far = listener.acceptAsync(Duration.ofSeconds(20)); // the loop sleeps till then
                Thread.sleep(100);
                long t0 = System.nanoTime();
                CompletableFuture<RdmaConnection> sooner = listener.acceptAsync(Duration.ofMillis(100)); // must wake it
                CompletableFuture<RdmaConnection> later = listener.acceptAsync(Duration.ofMillis(300)); // after sooner: no wake-up
                assertNull(sooner.get(10, TimeUnit.SECONDS));
                long soonerMs = (System.nanoTime() - t0) / 1_000_000;
                assertNull(later.get(10, TimeUnit.SECONDS));
                long laterMs = (System.nanoTime() - t0) / 1_000_000;
                System.out.println("CM-LOOP timers of 100 and 300 ms under one of 20 s fired after " + soonerMs + " and "
                        + laterMs + " ms");
                assertTrue(soonerMs >= 100 && soonerMs < 5_000, "the 100 ms timer fired after " + soonerMs + " ms");
                assertTrue(laterMs >= 300 && laterMs < 5_000, "the 300 ms timer fired after " + laterMs + " ms");
                assertTrue(far.cancel(false), "the 20 s accept ended early");
            }
        }
    }

    @OnEveryLabTransport
    void errorEventsBecomeCmExceptions(Transport transport) throws Exception {
        InetSocketAddress at = where(transport);
        try (RdmaListener listener = RdmaListener.bind(at, 4, OPTS)) {
            CompletableFuture<String> server = listener.acceptAsync(T).thenApply(c -> {
                try (c) {
                    // A blocking call from a stage, on the loop thread, would wait for itself.
                    IllegalStateException e = assertThrows(IllegalStateException.class, () -> c.accept(new byte[0], T));
                    c.reject(new byte[] {7});
                    return e.getMessage();
                } catch (RdmaException e) {
                    throw new CompletionException(e);
                }
            });
            Throwable t = failureOf(RdmaConnection.connectAsync(at, null, OPTS, new byte[0], T, CmEventLoop.shared()));
            CmException e = assertInstanceOf(CmException.class, t, String.valueOf(t));
            assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
            assertTrue(e.getMessage().startsWith("connecting to " + at + " failed: RDMA_CM_EVENT_REJECTED"), e.getMessage());
            assertTrue(server.get(10, TimeUnit.SECONDS).contains("event loop thread"), server.join());
        }
        InetSocketAddress nobody = where(transport);
        Throwable t = failureOf(RdmaConnection.connectAsync(nobody, null, OPTS, new byte[0], T, CmEventLoop.shared()));
        CmException e = assertInstanceOf(CmException.class, t, String.valueOf(t));
        System.out.println("CM-LOOP async connect where nobody listens: " + e.event() + ", " + e.getMessage());
        if (transport == Transport.IWARP) {
            assertNull(e.event(), e.getMessage());
            assertEquals(111, e.errno(), e.getMessage());
        } else {
            assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
        }
    }
}
