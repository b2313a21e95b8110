package org.rdmapanama;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A test's kind shows in its name: the device tests (tagged {@code device},
 * run in the lab) end in {@code DeviceTest}, or {@code InteropTest} when they
 * run against a native tool, and no host test does. scripts/test picks
 * rdma-netty's device tests by this name.
 */
class TestNamingTest {
    @Test
    void deviceTestsAndOnlyTheyAreNamedSo() throws IOException {
        List<String> wrong = new ArrayList<>();
        int device = 0;
        for (String module : List.of("rdma-panama", "rdma-bench", "rdma-netty")) {
            try (Stream<Path> files = Files.walk(LayeringTest.root().resolve(module + "/src/test/java"))) {
                for (Path p : files.filter(f -> f.toString().endsWith("Test.java")).toList()) {
                    String name = p.getFileName().toString().replace(".java", "");
                    boolean tagged = read(p).contains("Tag(\"device\")");
                    boolean named = name.endsWith("DeviceTest") || name.endsWith("InteropTest");
                    device += tagged ? 1 : 0;
                    if (tagged != named) {
                        wrong.add(name + (tagged ? " is a device test" : " is a host test"));
                    }
                }
            }
        }
        assertEquals(List.of(), wrong);
        assertTrue(device > 20, "only " + device + " device tests found");
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
