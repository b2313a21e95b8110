package org.rdmapanama.cm;

import org.rdmapanama.device.Transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The bytes a connect, accept or reject carries to the peer: checked against the transport's limit. */
final class PrivateData {
    private PrivateData() {}

    /** Refuses {@code data} longer than {@code t} carries in a connect ({@code connecting}) or an accept/reject. */
    static void check(Transport t, byte[] data, boolean connecting) {
        int max = connecting ? t.maxConnectPrivateData() : t.maxAcceptPrivateData();
        max = Math.min(max, 255); // private_data_len is a uint8_t
        if (data.length > max) {
            throw new IllegalArgumentException("private data of " + data.length + " bytes exceeds the " + max
                    + "-byte limit for " + (connecting ? "connect" : "accept") + " on " + t.displayName());
        }
    }

    /** {@code data} in native memory of {@code a}, or NULL when empty. */
    static MemorySegment segment(Arena a, byte[] data) {
        return data.length == 0 ? MemorySegment.NULL : a.allocateFrom(ValueLayout.JAVA_BYTE, data);
    }
}
