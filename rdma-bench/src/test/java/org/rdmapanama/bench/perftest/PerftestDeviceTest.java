package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.BenchRun;
import org.rdmapanama.bench.LabSelection;
import org.rdmapanama.bench.Main;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The perftest subcommands end to end in one JVM: a server on a thread and
 * the client on the test's thread, both through {@link Main#run}, on the
 * device selection picks for each transport: RoCEv2 with the TCP setup (the
 * GID index given with -x is selection's) and with -R, iWARP with rdma_cm
 * only; atomics are refused where the device reports atomic_cap NONE.
 */
@Tag("device")
class PerftestDeviceTest {
    static final Pattern LAT_ROW = Pattern.compile("(?m)^ (\\d+)\\s+(\\d+)(\\s+[0-9.]+){7}\\s*$");
    static final Pattern BW_ROW = Pattern.compile("(?m)^ (\\d+)\\s+(\\d+)(\\s+[0-9.]+){3}\\s*$");

    record Side(int status, String out, String err) {}

    /** Runs server and client; the client starts once the server says it is listening. */
    static Side[] pair(String test, String address, String... flags) throws Exception {
        String port = Integer.toString(LabPorts.next());
        List<String> serverArgs = new ArrayList<>(List.of(test));
        serverArgs.addAll(Arrays.asList(flags));
        if (serverArgs.stream().noneMatch(f -> f.contains("warmup"))) {
            // Both sides share this JVM, whose JIT is never idle for long: a short warm-up still
            // runs the rounds and their vote, without waiting for a quiet JIT.
            serverArgs.add("--warmup=1");
        }
        serverArgs.addAll(List.of("-p", port));
        List<String> clientArgs = new ArrayList<>(serverArgs);
        clientArgs.add(address);

        ByteArrayOutputStream sOut = new ByteArrayOutputStream();
        ByteArrayOutputStream sErr = new ByteArrayOutputStream();
        int[] sStatus = {-1};
        Thread server = Thread.ofPlatform().daemon().name("perftest-server").start(() ->
                sStatus[0] = Main.run(serverArgs.toArray(String[]::new), new PrintStream(sOut, true, StandardCharsets.UTF_8),
                        new PrintStream(sErr, true, StandardCharsets.UTF_8)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!sOut.toString(StandardCharsets.UTF_8).contains("Waiting for client to connect")) {
            if (!server.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("the server did not start listening: " + sOut + sErr);
            }
            Thread.sleep(50);
        }
        BenchRun c = BenchRun.of(clientArgs.toArray(String[]::new));
        server.join(TimeUnit.SECONDS.toMillis(180));
        if (server.isAlive()) {
            server.interrupt();
            throw new AssertionError("the server did not finish; client said: " + c.out() + c.err()
                    + "\nserver: " + sOut + sErr);
        }
        return new Side[] {new Side(sStatus[0], sOut.toString(StandardCharsets.UTF_8), sErr.toString(StandardCharsets.UTF_8)),
                new Side(c.status(), c.out(), c.err())};
    }

    static void check(Side side, String who, Side other, boolean bw, boolean rows, String size, String iters) {
        // A side that fails often only waited for the other one: show both.
        assertEquals(0, side.status(), who + " failed:\n" + side.out() + side.err()
                + "\nits peer (status " + other.status() + ") said:\n" + other.out() + other.err());
        assertTrue(side.out().contains(PerftestRows.RESULT_LINE), side.out());
        var m = (bw ? BW_ROW : LAT_ROW).matcher(side.out());
        if (!rows) {
            assertFalse(m.find(), who + " should print no results row:\n" + side.out());
            return;
        }
        assertTrue(m.find(), who + " printed no well-formed results row:\n" + side.out());
        assertEquals(size, m.group(1), side.out());
        assertEquals(iters, m.group(2), side.out());
    }

    /** {@code -x} and the GID index selection picked for the transport (RoCEv2: its RoCEv2 GID). */
    static List<String> gidFlag(Selection s) {
        assertEquals(GidType.ROCE_V2, s.gid().type(), "a RoCEv2 port's selected GID: " + s.gid());
        return List.of("-x", Integer.toString(s.gidIndex()));
    }

    /** mode: "gid" is the TCP setup with -x (selection's GID index), "-R" is rdma_cm. */
    @ParameterizedTest(name = "{0} on {1} {2}")
    @CsvSource({
            "write_lat, ROCE_V2, gid, 100",
            "send_lat,  ROCE_V2, gid, 100",
            "read_lat,  ROCE_V2, gid, 100",
            "write_bw,  ROCE_V2, gid, 200",
            "send_bw,   ROCE_V2, gid, 200",
            "read_bw,   ROCE_V2, gid, 200",
            "write_lat, ROCE_V2, -R,  100",
            "send_bw,   ROCE_V2, -R,  200",
            "write_lat, IWARP,   -R,  100",
            "send_lat,  IWARP,   -R,  100",
            "read_lat,  IWARP,   -R,  100",
            "write_bw,  IWARP,   -R,  200",
            "send_bw,   IWARP,   -R,  200",
            "read_bw,   IWARP,   -R,  200",
    })
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void runsAndReportsLikePerftest(String test, Transport transport, String mode, String iters) throws Exception {
        Selection s = LabDevices.select(transport);
        String device = s.device().name();
        List<String> flags = new ArrayList<>(List.of("-d", device, "-n", iters));
        flags.addAll(mode.equals("gid") ? gidFlag(s) : List.of(mode));
        boolean bw = test.endsWith("_bw");
        String size = bw ? "4096" : "2";
        if (bw) {
            flags.addAll(List.of("-s", size));
        }
        Side[] r = pair(test, LabSelection.address(s), flags.toArray(String[]::new));
        boolean serverRows = bw || test.equals("write_lat") || test.equals("send_lat");
        check(r[1], "client", r[0], bw, true, size, iters);
        check(r[0], "server", r[1], bw, serverRows, size, iters);
        assertTrue(r[1].out().contains("Device         : " + device), r[1].out());
        assertTrue(r[1].out().contains("Data ex. method : " + (mode.equals("-R") ? "rdma_cm" : "Ethernet")), r[1].out());
        assertTrue(r[1].out().contains("Transport type : " + (transport == Transport.IWARP ? "IW" : "IB")), r[1].out());
        if (mode.equals("gid")) {
            assertTrue(r[1].out().contains(" GID index       : " + s.gidIndex() + "\n"), r[1].out());
        }
    }

    /**
     * {@code -q}: perftest's -n per QP, so the row counts n x q WRs; every QP's address is in the
     * header, each a QP of its own (with -R, a connection each).
     */
    @ParameterizedTest(name = "{0} -q {3} on {1} {2}")
    @CsvSource({
            "write_bw, ROCE_V2, gid, 3",
            "read_bw,  ROCE_V2, -R,  2",
            "write_bw, IWARP,   -R,  3",
            "read_bw,  IWARP,   -R,  4",
    })
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void severalQpsRunTheirShareEach(String test, Transport transport, String mode, int qps) throws Exception {
        Selection s = LabDevices.select(transport);
        List<String> flags = new ArrayList<>(List.of("-d", s.device().name(), "-n", "100", "-s", "1024",
                "-q", Integer.toString(qps)));
        flags.addAll(mode.equals("gid") ? gidFlag(s) : List.of(mode));
        Side[] r = pair(test, LabSelection.address(s), flags.toArray(String[]::new));
        String iters = Integer.toString(100 * qps);
        check(r[1], "client", r[0], true, true, "1024", iters);
        check(r[0], "server", r[1], true, true, "1024", iters);
        for (Side side : r) {
            assertTrue(side.out().contains(" Number of qps   : " + qps + "\t"), side.out());
            for (String end : new String[] {"local", "remote"}) {
                var qpn = Pattern.compile("(?m)^ " + end + " address: LID \\S+ QPN (\\S+)").matcher(side.out());
                java.util.Set<String> seen = new java.util.HashSet<>();
                while (qpn.find()) {
                    seen.add(qpn.group(1));
                }
                assertEquals(qps, seen.size(), end + " QPs:\n" + side.out());
            }
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void atomicsAreRefusedWhereTheDeviceReportsAtomicCapNone() throws Exception {
        Selection s = LabDevices.select(Transport.IWARP);
        assertEquals(AtomicCapability.NONE, s.device().capabilities().atomicCap(), s.device().name() + "'s atomic_cap");
        BenchRun r = BenchRun.of("atomic_lat", "-d", s.device().name(), "-R", "-n", "50", "-p",
                Integer.toString(LabPorts.next()), LabSelection.address(s));
        assertEquals(1, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("atomic_lat refused: " + s.device().name() + " (iWARP) reports atomic_cap NONE"), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
    }

    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void atomicLatencyWhereTheDeviceHasAtomics() throws Exception {
        Selection s = LabDevices.select(Transport.ROCE_V2);
        assertNotEquals(AtomicCapability.NONE, s.device().capabilities().atomicCap(), s.device().name() + "'s atomic_cap");
        List<String> flags = new ArrayList<>(List.of("-d", s.device().name(), "-n", "100"));
        flags.addAll(gidFlag(s));
        Side[] r = pair("atomic_lat", LabSelection.address(s), flags.toArray(String[]::new));
        check(r[1], "client", r[0], false, true, "8", "100");
        check(r[0], "server", r[1], false, false, "8", "100");
    }
}
