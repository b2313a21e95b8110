package org.rdmapanama.verbs;

import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.NativeHeap;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.device.Transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The async event watcher sleeps until an event or its stop: in the lab a JVM
 * shares one vCPU, and a watcher that woke on a timer took turns with a
 * busy-polling data path. It ends as soon as its owned context closes, and
 * leaves no thread or fd behind.
 */
@Tag("device")
class AsyncEventWatcherDeviceTest {
    /** The kernel's name of a watcher thread: "rdma-async-events-..." cut to 15 characters. */
    private static final String COMM = "rdma-async-even";

    @OnEveryLabTransport
    void anIdleWatcherNeverWakesAndEndsWithItsContext(Transport transport) throws Exception {
        // Other tests' rdma_cm contexts keep theirs (librdmacm keeps those contexts open), and an
        // earlier owned context's watcher may still be ending: only the new one counts.
        List<Path> others = watcherTasks();
        long fdsBefore = NativeHeap.openFds();
        Path task;
        try (DeviceContext ctx = LabDevices.open(transport)) {
            ctx.createCompletionQueue(16); // something it would report on
            task = awaitNewWatcherInPoll(others);
            long before = switches(task);
            Thread.sleep(1500);
            long woke = switches(task) - before;
            // A 100 ms poll slice woke it 18-20 times here; an event-less device wakes it never.
            assertEquals(0, woke, "the idle watcher of " + ctx.device().name() + " woke " + woke + " times in 1.5 s");
        }
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (Files.exists(task) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertFalse(Files.exists(task), "the watcher thread outlived its context by 2 s");
        // Earlier watchers ending meanwhile can only close fds, never open one.
        assertTrue(NativeHeap.openFds() <= fdsBefore, "fds left open by the context and its watcher: "
                + fdsBefore + " before, " + NativeHeap.openFds() + " after");
    }

    /** The new watcher thread, once it sleeps in poll(2) (7) or ppoll(2) (271): its start-up is not a wake. */
    private static Path awaitNewWatcherInPoll(List<Path> others) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            List<Path> fresh = watcherTasks();
            fresh.removeAll(others);
            assertTrue(fresh.size() <= 1, "more than one new watcher thread for one context: " + fresh);
            if (fresh.size() == 1) {
                String call = Files.readString(fresh.get(0).resolve("syscall")).split(" ", 2)[0].strip();
                if (call.equals("7") || call.equals("271")) {
                    Thread.sleep(50); // past the return to sleep, on the way in
                    return fresh.get(0);
                }
            }
            if (System.nanoTime() > deadline) {
                fail("no new watcher thread asleep in poll after 10 s: " + fresh);
            }
            Thread.sleep(10);
        }
    }

    private static List<Path> watcherTasks() throws IOException {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(t.resolve("comm")).strip().equals(COMM)) {
                        found.add(t);
                    }
                } catch (IOException gone) {
                    // the thread ended while listed
                }
            }
        }
        found.sort(null);
        return found;
    }

    /** Voluntary and involuntary context switches of one thread: each sleep it wakes from is one. */
    private static long switches(Path task) throws IOException {
        long n = 0;
        for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                n += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
            }
        }
        return n;
    }
}
