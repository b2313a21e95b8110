package org.rdmapanama.netty;

import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The lab's devices, picked by transport through the runtime's own
 * {@link Selection} (the pattern of rdma-panama's test kit, kept small here
 * rather than depending on its test jar). {@code RDMA_TEST_ROCE_DEVICE} /
 * {@code RDMA_TEST_IWARP_DEVICE} narrow the pick to one device, which must then
 * have that transport; where no device has the transport, the test skips.
 */
public final class LabDevices {
    private LabDevices() {}

    public static final List<Transport> TRANSPORTS = List.of(Transport.ROCE_V2, Transport.IWARP);
    /** Above rdma-panama's device tests' range (21100..29999), should both ever share a lab run. */
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(31100);

    public static List<Transport> transports() {
        return TRANSPORTS;
    }

    static Optional<String> override(Transport t) {
        return Optional.ofNullable(System.getenv(t == Transport.IWARP ? "RDMA_TEST_IWARP_DEVICE" : "RDMA_TEST_ROCE_DEVICE"));
    }

    public static RdmaConfig config(Transport t) {
        return RdmaConfig.any().withTransport(t.name()).withDevice(override(t).orElse(null));
    }

    /** A transport on the device selection picks for {@code t}; skips the test where there is none. */
    public static RdmaTransport open(Transport t, ChannelOptions options) throws RdmaException {
        try {
            Selection.select(config(t), RdmaDevices.list());
        } catch (NoSuchDeviceException e) {
            if (override(t).isPresent()) {
                throw new AssertionError("the device named for " + t + " does not have it: " + e.getMessage(), e);
            }
            assumeTrue(false, e.getMessage());
        }
        return RdmaTransport.open(config(t), options);
    }

    /** A listening port no other test of this JVM used. */
    public static int nextPort() {
        return NEXT_PORT.getAndIncrement();
    }
}
