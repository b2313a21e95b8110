package org.rdmapanama;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdmapanama.device.Transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

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

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Transport.class, names = {"ROCE_V2", "IWARP"})
    void anIdleWatcherNeverWakesAndEndsWithItsContext(Transport transport) throws Exception {
        // Other tests' rdma_cm contexts keep theirs (librdmacm keeps those contexts open): only the new one counts.
        List<Path> others = watcherTasks();
        long fdsBefore = openFds();
        try (DeviceContext ctx = LabDevices.open(transport)) {
            ctx.createCompletionQueue(16); // something it would report on
            List<Path> watchers = watcherTasks();
            watchers.removeAll(others);
            assertEquals(1, watchers.size(), "one new watcher thread for the one context: " + watchers);
            Path task = watchers.get(0);
            long before = switches(task);
            Thread.sleep(1500);
            long woke = switches(task) - before;
            // A 100 ms poll slice woke it 15 times here; an event-less device wakes it never.
            assertEquals(0, woke, "the idle watcher of " + ctx.device().name() + " woke " + woke + " times in 1.5 s");
        }
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (!watcherTasks().equals(others) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(others, watcherTasks(), "the watcher thread outlived its context by 2 s");
        assertEquals(fdsBefore, openFds(), "fds left open by the context and its watcher");
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

    private static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
