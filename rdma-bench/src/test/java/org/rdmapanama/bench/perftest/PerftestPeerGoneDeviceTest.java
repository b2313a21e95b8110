package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.Main;
import org.rdmapanama.bench.PeerJvm;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer killed mid-run ends the other side's run at once, as native
 * perftest's does: the survivor (in this JVM) exits with status 1 and says
 * which signal it saw, long before any of its timeouts (30 s and more). The
 * victim is a JVM of its own, so that killing it closes its sockets and
 * rdma_cm ids as a crash does.
 */
@Tag("device")
class PerftestPeerGoneDeviceTest {
    /** Far below the 30 s stall and 60 s + -D barrier timeouts the server would otherwise wait out. */
    static final long BOUND_SECONDS = 10;

    /**
     * killed: the side in the JVM of its own, killed mid-run; the other one runs in this JVM. Each transport
     * loses a client and a server, once in a bandwidth and once in a latency test, over both of RoCEv2's
     * connection set-ups (each case starts a JVM: about 30 s under emulation).
     */
    @ParameterizedTest(name = "{0} on {1} {2}, {4} killed")
    @CsvSource({
            "write_bw,  ROCE_V2, gid, -D 30, client",
            "send_lat,  IWARP,   -R,  -D 30, client",
            "read_lat,  ROCE_V2, -R,  -D 30, server",
            "send_bw,   IWARP,   -R,  -D 30, server",
    })
    @Timeout(value = 200, unit = TimeUnit.SECONDS)
    void aKilledPeerEndsTheOthersRunAtOnce(String test, Transport transport, String mode, String length,
            String killed) throws Exception {
        Selection s = LabDevices.select(transport);
        List<String> serverArgs = new ArrayList<>(List.of(test, "-d", s.device().name()));
        serverArgs.addAll(mode.equals("gid") ? PerftestDeviceTest.gidFlag(s) : List.of(mode));
        serverArgs.addAll(Arrays.asList(length.split(" ")));
        serverArgs.addAll(List.of("--warmup=1", "-p", Integer.toString(LabPorts.next())));
        List<String> clientArgs = new ArrayList<>(serverArgs);
        clientArgs.add(LabSelection.address(s));
        boolean clientKilled = killed.equals("client");

        ByteArrayOutputStream sOut = new ByteArrayOutputStream(); // the survivor's, in this JVM
        ByteArrayOutputStream sErr = new ByteArrayOutputStream();
        ByteArrayOutputStream pOut = new ByteArrayOutputStream(); // the victim's, stderr merged
        int[] sStatus = {-1};
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        Process victim = null;
        if (!clientKilled) {
            victim = PeerJvm.start(serverArgs, pOut);
            await(pOut, "Waiting for client to connect", victim, null, deadline);
        }
        List<String> survivorArgs = clientKilled ? serverArgs : clientArgs;
        Thread survivor = Thread.ofPlatform().daemon().name("perftest-survivor").start(() ->
                sStatus[0] = Main.run(survivorArgs.toArray(String[]::new),
                        new PrintStream(sOut, true, StandardCharsets.UTF_8), new PrintStream(sErr, true, StandardCharsets.UTF_8)));
        try {
            if (clientKilled) {
                await(sOut, "Waiting for client to connect", null, survivor, deadline);
                victim = PeerJvm.start(clientArgs, pOut);
            }
            // Connected and past the header: the run (its warm-up or timed part) is under way.
            await(sOut, "Data ex. method", victim, survivor, deadline);
            Thread.sleep(3000);
            assertTrue(victim.isAlive(), "the " + killed + " ended before it was killed: " + pOut
                    + "\nits peer: " + sOut + sErr);
            assertTrue(survivor.isAlive(), "its peer ended before the " + killed + " was killed: " + sOut + sErr
                    + "\nthe " + killed + ": " + pOut);
        } finally {
            if (victim != null) {
                victim.destroyForcibly();
            }
        }
        victim.waitFor(30, TimeUnit.SECONDS);
        long at = System.nanoTime();
        survivor.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        double took = (System.nanoTime() - at) / 1e9;
        assertFalse(survivor.isAlive(), "its peer still runs " + BOUND_SECONDS + " s after the " + killed
                + " was killed: " + sOut + sErr);
        String err = sErr.toString(StandardCharsets.UTF_8);
        System.out.printf("%s on %s %s, %s killed: its peer ended %.2f s after the kill: %s", test, transport, mode,
                killed, took, err);
        assertEquals(1, sStatus[0], sOut + err);
        // Which signal comes first is a race between the victim's socket, its rdma_cm id and its QP.
        assertTrue(err.contains("rdma-bench " + test + ": the peer went away (")
                || err.contains("rdma-bench " + test + ": the connection failed (our QP left RTS"), err);
        assertFalse(err.contains("Exception"), err);
    }

    private static void await(ByteArrayOutputStream out, String text, Process p, Thread t, long deadline)
            throws InterruptedException {
        while (!out.toString(StandardCharsets.UTF_8).contains(text)) {
            if ((p != null && !p.isAlive()) || (t != null && !t.isAlive()) || System.nanoTime() > deadline) {
                throw new AssertionError("no \"" + text + "\" in: " + out);
            }
            Thread.sleep(50);
        }
    }
}
