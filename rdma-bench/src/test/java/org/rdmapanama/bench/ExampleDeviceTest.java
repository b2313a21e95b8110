package org.rdmapanama.bench;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The README example, on the transport one property picks. */
@Tag("device")
class ExampleDeviceTest {
    @ParameterizedTest
    @CsvSource({"iwarp, iWARP", "rocev2, RoCEv2"})
    void readmeExampleRunsOnTheConfiguredTransport(String transport, String shown) throws Exception {
        String old = System.setProperty("rdma.transport", transport);
        try {
            assertEquals("hello over " + shown, ExampleCommand.example());
        } finally {
            if (old == null) {
                System.clearProperty("rdma.transport");
            } else {
                System.setProperty("rdma.transport", old);
            }
        }
    }
}
