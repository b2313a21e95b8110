package org.rdmapanama.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The perftest subcommands end to end in one JVM: a server on a thread and
 * the client on the test's thread, both through {@link Main#run}. rxe0 with
 * the TCP setup (and -R), siw0 with rdma_cm; atomics refused on siw0.
 */
@Tag("device")
class PerftestDeviceTest {
    static final String RXE = System.getenv().getOrDefault("RDMA_LAB_ADDR_RXE0", "10.77.0.1");
    static final String SIW = System.getenv().getOrDefault("RDMA_LAB_ADDR_SIW0", "10.77.1.1");
    static final Pattern LAT_ROW = Pattern.compile("(?m)^ (\\d+)\\s+(\\d+)(\\s+[0-9.]+){7}\\s*$");
    static final Pattern BW_ROW = Pattern.compile("(?m)^ (\\d+)\\s+(\\d+)(\\s+[0-9.]+){3}\\s*$");
    static final AtomicInteger PORTS = new AtomicInteger(18600);

    record Side(int status, String out, String err) {}

    /** Runs server and client; the client starts once the server says it is listening. */
    static Side[] pair(String test, String address, String... flags) throws Exception {
        String port = Integer.toString(PORTS.getAndIncrement());
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
        MainTest.Result c = MainTest.run(clientArgs.toArray(String[]::new));
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
        assertTrue(side.out().contains(PerftestStats.RESULT_LINE), side.out());
        var m = (bw ? BW_ROW : LAT_ROW).matcher(side.out());
        if (!rows) {
            assertFalse(m.find(), who + " should print no results row:\n" + side.out());
            return;
        }
        assertTrue(m.find(), who + " printed no well-formed results row:\n" + side.out());
        assertEquals(size, m.group(1), side.out());
        assertEquals(iters, m.group(2), side.out());
    }

    @ParameterizedTest(name = "{0} on {1} {2}")
    @CsvSource({
            "write_lat, rxe0, -x 1, 100",
            "send_lat,  rxe0, -x 1, 100",
            "read_lat,  rxe0, -x 1, 100",
            "write_bw,  rxe0, -x 1, 200",
            "send_bw,   rxe0, -x 1, 200",
            "read_bw,   rxe0, -x 1, 200",
            "write_lat, rxe0, -R,   100",
            "send_bw,   rxe0, -R,   200",
            "write_lat, siw0, -R,   100",
            "send_lat,  siw0, -R,   100",
            "read_lat,  siw0, -R,   100",
            "write_bw,  siw0, -R,   200",
            "send_bw,   siw0, -R,   200",
            "read_bw,   siw0, -R,   200",
    })
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void runsAndReportsLikePerftest(String test, String device, String mode, String iters) throws Exception {
        List<String> flags = new ArrayList<>(List.of("-d", device, "-n", iters));
        flags.addAll(Arrays.asList(mode.split(" ")));
        boolean bw = test.endsWith("_bw");
        String size = bw ? "4096" : "2";
        if (bw) {
            flags.addAll(List.of("-s", size));
        }
        Side[] r = pair(test, device.equals("siw0") ? SIW : RXE, flags.toArray(String[]::new));
        boolean serverRows = bw || test.equals("write_lat") || test.equals("send_lat");
        check(r[1], "client", r[0], bw, true, size, iters);
        check(r[0], "server", r[1], bw, serverRows, size, iters);
        assertTrue(r[1].out().contains("Device         : " + device), r[1].out());
        assertTrue(r[1].out().contains("Data ex. method : " + (mode.equals("-R") ? "rdma_cm" : "Ethernet")), r[1].out());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void atomicsAreRefusedOnSiw() {
        MainTest.Result r = MainTest.run("atomic_lat", "-d", "siw0", "-R", "-n", "50", "-p",
                Integer.toString(PORTS.getAndIncrement()), SIW);
        assertEquals(1, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("atomic_lat refused: siw0 (iWARP) reports atomic_cap NONE"), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
    }

    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void atomicLatencyOnRxe() throws Exception {
        Side[] r = pair("atomic_lat", RXE, "-d", "rxe0", "-x", "1", "-n", "100");
        check(r[1], "client", r[0], false, true, "8", "100");
        check(r[0], "server", r[1], false, false, "8", "100");
    }
}
