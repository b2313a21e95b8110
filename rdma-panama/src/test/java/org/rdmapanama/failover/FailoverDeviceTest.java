package org.rdmapanama.failover;

import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.internal.Cleanup;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transport failover on the lab's RoCEv2 and iWARP devices (picked by
 * selection): a RoCE route that cannot be set up is reported and the
 * connection comes up on iWARP; an established RoCE connection whose
 * interface goes down mid-transfer fails with a transport error, is
 * reported, and with reconnects on continues on iWARP where it left off
 * (without, it is only reported); routes and listeners on the wrong
 * transport's address are refused. Each case prints its "FAILOVER ..." lines
 * and ends with the kernel's object counts back where they were.
 */
@Tag("device")
class FailoverDeviceTest {
    static final ConnectionOptions OPTS = FailoverPolicy.defaults().options().withDepth(4, 4);
    /** Far beyond what the fault takes to show (rxe: at once, LOC_QP_OP_ERR with its interface down). */
    static final Duration ROUND_LIMIT = Duration.ofSeconds(120);

    static InetAddress roce() throws Exception {
        return FaultRig.addressOf(Transport.ROCE_V2);
    }

    static InetAddress iwarp() throws Exception {
        return FaultRig.addressOf(Transport.IWARP);
    }

    static FailoverPolicy policy(boolean reconnect) {
        return FailoverPolicy.defaults().withOptions(OPTS).withAttemptTimeout(Duration.ofSeconds(30))
                .withReconnect(reconnect);
    }

    static void print(FailoverEvent e) {
        System.out.println("FAILOVER " + e);
    }

    /**
     * Nobody listens on the RoCE address: the IB CM's reject. (Not an interface taken down: on
     * Linux 6.1 rxe, a CM message sent while its interface is down leaves rdma_cm on that device
     * unable to connect until the guest reboots, which would fail every later RoCE test.)
     */
    @Test
    void aRouteThatCannotBeSetUpIsReportedAndTheConnectionComesUpOnTheNext() throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        Map<Transport, InetSocketAddress> listen = Map.of(Transport.IWARP, new InetSocketAddress(iwarp(), port));
        List<TransportRoute> routes = List.of(new TransportRoute(Transport.ROCE_V2, new InetSocketAddress(roce(), port)),
                new TransportRoute(Transport.IWARP, new InetSocketAddress(iwarp(), port)));
        try (FailoverListener listener = FailoverListener.bind(listen, 4, OPTS)) {
            FailoverEcho.Server server = new FailoverEcho.Server(listener);
            Thread serving = Thread.ofPlatform().name("failover-echo").start(server);
            TransportFailover failover = new TransportFailover(routes, policy(false), FailoverDeviceTest::print);
            RdmaConnection c = failover.connect(TransportFailover.NO_SETUP);
            try {
                assertEquals(Transport.IWARP, c.context().transport());
                List<FailoverEvent> h = failover.history();
                assertEquals(2, h.size(), h.toString());
                assertEquals(FailoverEvent.Kind.ATTEMPT_FAILED, h.get(0).kind());
                assertEquals(Transport.ROCE_V2, h.get(0).route().transport());
                assertEquals(TransportFailure.Reason.REJECTED, h.get(0).failure().reason(), h.get(0).toString());
                assertEquals(FailoverEvent.Kind.ESTABLISHED, h.get(1).kind());
                assertSame(routes.get(1), failover.route());
                echo(c, 0, 5);
            } finally {
                Cleanup.closeQuietly(c);
                server.stop = true;
                serving.join(60_000);
            }
            assertNull(server.crashed);
            assertEquals(5, server.expected);
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after the failover");
    }

    /** Round trips {@code from} .. {@code to - 1} on {@code c}, each required to succeed. */
    static void echo(RdmaConnection c, long from, long to) throws Exception {
        MemoryRegion mr = c.protectionDomain().allocate(2 * FailoverEcho.MSG);
        try (SendRequest send = c.queuePair().newSendRequest(1, 1).wrId(1).opcode(0, Opcode.SEND).sge(mr, 0, FailoverEcho.MSG);
             ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1).wrId(2).sge(mr, FailoverEcho.MSG, FailoverEcho.MSG);
             CompletionBatch batch = new CompletionBatch(4)) {
            for (long n = from; n < to; n++) {
                TransportFailure f = FailoverEcho.roundTrip(c, mr, send, recv, batch, n, FailoverEcho.T);
                assertNull(f, "round trip " + n);
            }
        }
    }

    @ParameterizedTest(name = "reconnect {0}")
    @ValueSource(booleans = {true, false})
    void aRoceLinkLostMidTransferIsReportedAndWithReconnectTheTransferGoesOnOverIwarp(boolean reconnect)
            throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        Map<Transport, InetSocketAddress> listen = new LinkedHashMap<>();
        listen.put(Transport.ROCE_V2, new InetSocketAddress(roce(), port));
        listen.put(Transport.IWARP, new InetSocketAddress(iwarp(), port));
        List<TransportRoute> routes = List.of(new TransportRoute(Transport.ROCE_V2, listen.get(Transport.ROCE_V2)),
                new TransportRoute(Transport.IWARP, listen.get(Transport.IWARP)));
        String netdev = interfaceOf(roce());
        final int total = 40, faultAt = 15;
        long sent = 0;
        try (FailoverListener listener = FailoverListener.bind(listen, 4, OPTS)) {
            FailoverEcho.Server server = new FailoverEcho.Server(listener);
            Thread serving = Thread.ofPlatform().name("failover-echo").start(server);
            TransportFailover failover = new TransportFailover(routes, policy(reconnect), FailoverDeviceTest::print);
            RdmaConnection c = failover.connect(TransportFailover.NO_SETUP);
            boolean linkDown = false, faulted = false;
            try {
                assertEquals(Transport.ROCE_V2, c.context().transport());
                long n = FailoverEcho.number(c.peerPrivateData());
                while (n < total) {
                    MemoryRegion mr = c.protectionDomain().allocate(2 * FailoverEcho.MSG);
                    TransportFailure failure = null;
                    try (SendRequest send = c.queuePair().newSendRequest(1, 1).wrId(1).opcode(0, Opcode.SEND)
                            .sge(mr, 0, FailoverEcho.MSG);
                         ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1).wrId(2)
                                 .sge(mr, FailoverEcho.MSG, FailoverEcho.MSG);
                         CompletionBatch batch = new CompletionBatch(4)) {
                        while (n < total && failure == null) {
                            if (n == faultAt && !faulted) {
                                run("ip", "link", "set", netdev, "down");
                                linkDown = faulted = true;
                                System.out.println("FAILOVER " + netdev + " down before message " + n);
                            }
                            failure = FailoverEcho.roundTrip(c, mr, send, recv, batch, n, ROUND_LIMIT);
                            sent++;
                            if (failure == null) {
                                n++;
                            }
                        }
                    }
                    if (failure == null) {
                        break;
                    }
                    // Up again before anything sends a CM message on rxe (the DREQ of closing the broken
                    // connection): one sent while the interface is down breaks rdma_cm on rxe until reboot.
                    linkUp(netdev);
                    linkDown = false;
                    assertEquals(Transport.ROCE_V2, c.context().transport(), "failed on " + c + ": " + failure);
                    assertTrue(failure.isTransportError(), failure.toString());
                    RdmaConnection next = failover.failed(c, failure, TransportFailover.NO_SETUP);
                    FailoverEvent reported = failover.history().stream()
                            .filter(e -> e.kind() == FailoverEvent.Kind.CONNECTION_FAILED).toList().getLast();
                    assertEquals(FailoverEvent.Kind.CONNECTION_FAILED, reported.kind());
                    assertEquals(failure, reported.failure());
                    assertEquals(reconnect, reported.reconnecting());
                    if (next == null) {
                        assertFalse(reconnect);
                        break; // reported only; c is still ours, and closed below
                    }
                    c = next;
                    assertEquals(Transport.IWARP, c.context().transport());
                    n = FailoverEcho.number(c.peerPrivateData()); // the server says where to resume
                    assertEquals(faultAt, n, "the server's next expected message");
                }
                System.out.println("FAILOVER reconnect " + reconnect + ": " + n + " of " + total + " echoed, " + sent
                        + " sent; server: " + server.log);
                assertEquals(reconnect ? total : faultAt, n);
                assertTrue(faulted);
            } finally {
                if (linkDown) {
                    linkUp(netdev);
                }
                Cleanup.closeQuietly(c);
                server.stop = true;
                serving.join(60_000);
            }
            assertNull(server.crashed);
            assertEquals(reconnect ? total : faultAt, server.expected, server.log.toString());
            assertEquals(0, server.gaps + server.badChecks, "gaps, bad check words");
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after the failover");
    }

    @Test
    void routesAndListenersOnAnotherTransportsAddressAreRefused() throws Exception {
        Map<String, Integer> before = LeakCheck.counts();
        int port = LabPorts.next();
        TransportFailover wrong = new TransportFailover(
                List.of(new TransportRoute(Transport.ROCE_V2, new InetSocketAddress(iwarp(), port))),
                policy(true), FailoverDeviceTest::print);
        String e = assertThrows(IllegalArgumentException.class, () -> wrong.connect(TransportFailover.NO_SETUP))
                .getMessage();
        String siw = LabDevices.select(Transport.IWARP).device().name();
        System.out.println("FAILOVER refused: " + e);
        assertTrue(e.contains("does not lead to a RoCEv2 device") && e.contains("reached through " + siw + " (iWARP)"), e);
        assertEquals(TransportFailure.Reason.WRONG_TRANSPORT, wrong.history().getFirst().failure().reason());

        e = assertThrows(IllegalArgumentException.class, () -> FailoverListener.bind(
                Map.of(Transport.IWARP, new InetSocketAddress(roce(), port)), 1, OPTS)).getMessage();
        System.out.println("FAILOVER refused: " + e);
        Selection rxe = LabDevices.select(Transport.ROCE_V2);
        assertTrue(e.contains("cannot listen for iWARP on") && e.contains(rxe.device().name() + " (RoCEv2)"), e);

        // Nobody listens on either: every attempt is listed with its cause.
        TransportFailover none = new TransportFailover(List.of(
                new TransportRoute(Transport.ROCE_V2, new InetSocketAddress(roce(), port)),
                new TransportRoute(Transport.IWARP, new InetSocketAddress(iwarp(), port))), policy(true), null);
        FailoverException f = assertThrows(FailoverException.class, () -> none.connect(TransportFailover.NO_SETUP));
        System.out.println("FAILOVER no route left: " + f.getMessage());
        assertEquals(2, f.attempts().size());
        assertTrue(f.getMessage().contains("attempt 1, RoCEv2 to ") && f.getMessage().contains("attempt 2, iWARP to "),
                f.getMessage());
        assertEquals(before, LeakCheck.awaitCounts(before), "rdma res show after the refusals");
    }

    /** Brings the interface up and waits until rdma_cm resolves its address again (port ACTIVE, GID back). */
    static void linkUp(String netdev) throws Exception {
        run("ip", "link", "set", netdev, "up");
        InetSocketAddress at = new InetSocketAddress(roce(), LabPorts.next());
        for (int i = 0; ; i++) {
            try (RdmaConnection c = RdmaConnection.resolve(at, null, OPTS, Duration.ofSeconds(5))) {
                return;
            } catch (Exception e) {
                if (i == 50) {
                    throw new AssertionError(netdev + " came up, but its address does not resolve: " + e, e);
                }
                Thread.sleep(200);
            }
        }
    }

    /** The interface that carries {@code addr}, from "4: dummy0    inet 10.77.0.1/24 ...". */
    static String interfaceOf(InetAddress addr) throws IOException, InterruptedException {
        String[] line = run("ip", "-o", "-4", "addr", "show", "to", addr.getHostAddress() + "/32").strip().split("\\s+");
        assertTrue(line.length > 1, "no interface carries " + addr);
        return line[1];
    }

    static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd) + " did not end");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
        return out;
    }
}
