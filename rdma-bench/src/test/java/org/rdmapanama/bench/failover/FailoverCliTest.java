package org.rdmapanama.bench.failover;

import org.junit.jupiter.api.Test;
import org.rdmapanama.device.Transport;
import org.rdmapanama.failover.TransportRoute;

import java.net.InetSocketAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code rdma-bench failover}'s command line: routes in preference order, and one-line errors. */
class FailoverCliTest {
    static String error(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> FailoverCommand.parse(args)).getMessage();
    }

    @Test
    void theClientsRoutesFollowThePreferenceNotTheOrderOfThePeers() {
        FailoverCommand.Options o = FailoverCommand.parse(new String[] {"--transport", "rocev2,iwarp",
                "--peer", "iwarp=10.78.1.2", "--peer", "rocev2=10.78.0.2", "-p", "7500", "-n", "50", "--no-reconnect"});
        assertEquals(List.of(new TransportRoute(Transport.ROCE_V2, new InetSocketAddress("10.78.0.2", 7500)),
                new TransportRoute(Transport.IWARP, new InetSocketAddress("10.78.1.2", 7500))), o.routes());
        assertEquals(50, o.messages());
        assertFalse(o.policy().reconnect());
        assertEquals(6, o.policy().options().retryCount()); // not 7: rxe retries 7 forever
        assertTrue(FailoverCommand.parse(new String[] {"--transport", "iwarp", "--peer", "iwarp=10.78.1.2"})
                .policy().reconnect());
    }

    @Test
    void theServerListensOnOneAddressPerTransport() {
        FailoverCommand.Options o = FailoverCommand.parse(new String[] {"-s", "--listen", "rocev2=10.78.0.2",
                "--listen", "iwarp=10.78.1.2"});
        assertTrue(o.server());
        assertEquals(List.of(Transport.ROCE_V2, Transport.IWARP), List.copyOf(o.listen().keySet()));
        assertEquals(FailoverCommand.DEFAULT_PORT, o.listen().get(Transport.IWARP).getPort());
    }

    @Test
    void badCommandLinesSayWhatIsWrong() {
        assertTrue(error("--transport", "rocev2,iwarp", "--peer", "rocev2=10.78.0.2").contains("names iWARP, but no peer address"));
        assertTrue(error("--transport", "rocev2,rocev2", "--peer", "rocev2=10.78.0.2").contains("names RoCEv2 twice"));
        assertTrue(error("--transport", "rocev2", "--peer", "10.78.0.2").contains("needs TRANSPORT=ADDR"));
        assertTrue(error("--transport", "rocev2", "--peer", "pigeon=10.78.0.2").contains("unknown transport 'pigeon'"));
        assertTrue(error("-s", "--listen", "roce=10.78.0.2", "--listen", "rocev2=10.78.0.3").contains("RoCEv2 twice"));
        assertTrue(error("-s").contains("needs --listen"));
        assertTrue(error("-s", "--listen", "iwarp=10.78.1.2", "--peer", "iwarp=10.78.1.3").contains("not --peer"));
        assertTrue(error("--listen", "iwarp=10.78.1.2").contains("--listen is for the server"));
        assertTrue(error("--transport", "iwarp").contains("needs --peer"));
    }
}
