package org.rdmapanama.failover;

import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.CmExceptions;
import org.junit.jupiter.api.Test;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.Transport;
import org.rdmapanama.verbs.AsyncEventType;
import org.rdmapanama.verbs.WcStatus;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What needs no device: routes from a transport preference, how failures are
 * classified (and which ones may move a connection), and the failover's
 * refusals of bad input and its report of every attempt.
 */
class FailoverRulesTest {
    static final InetSocketAddress ROCE = new InetSocketAddress("10.78.0.2", 7471);
    static final InetSocketAddress IWARP = new InetSocketAddress("10.78.1.2", 7471);

    @Test
    void routesFollowThePreferenceAndNeedAnAddressForEachTransport() {
        RdmaConfig c = RdmaConfig.load(new Properties(), Map.of("RDMA_TRANSPORT", "iwarp,rocev2"));
        List<TransportRoute> routes = TransportRoute.preferred(c, Map.of(Transport.ROCE_V2, ROCE, Transport.IWARP, IWARP));
        assertEquals(List.of(new TransportRoute(Transport.IWARP, IWARP), new TransportRoute(Transport.ROCE_V2, ROCE)), routes);
        assertEquals("iWARP to 10.78.1.2:7471", routes.getFirst().toString());
        String e = assertThrows(IllegalArgumentException.class,
                () -> TransportRoute.preferred(c, Map.of(Transport.ROCE_V2, ROCE))).getMessage();
        assertTrue(e.contains("names iWARP, but no peer address is given for it")
                && e.contains("environment variable RDMA_TRANSPORT"), e);
        e = assertThrows(IllegalArgumentException.class,
                () -> TransportRoute.preferred(RdmaConfig.any(), Map.of(Transport.ROCE_V2, ROCE))).getMessage();
        assertTrue(e.contains("no transport preference"), e);
    }

    @Test
    void setupFailuresAreClassifiedByEventOrTimeout() {
        assertEquals(TransportFailure.Reason.REJECTED,
                TransportFailure.of(CmExceptions.of("connecting failed", CmEventType.REJECTED, 8)).reason());
        assertEquals(TransportFailure.Reason.UNREACHABLE,
                TransportFailure.of(CmExceptions.of("x", CmEventType.UNREACHABLE, -110)).reason());
        assertEquals(TransportFailure.Reason.ADDRESS_ERROR,
                TransportFailure.of(CmExceptions.of("x", CmEventType.ADDR_ERROR, -113)).reason());
        assertEquals(TransportFailure.Reason.TIMEOUT, TransportFailure.of(CmExceptions.timeout("timed out")).reason());
        assertEquals(TransportFailure.Reason.REFUSED,
                TransportFailure.of(CmExceptions.of("refused", null, -111)).reason());
        assertEquals(TransportFailure.Reason.OTHER, TransportFailure.of(new IllegalStateException("x")).reason());
    }

    @Test
    void onlyTransportErrorsMayMoveAConnection() {
        assertTrue(TransportFailure.completion(WcStatus.RETRY_EXC_ERR).isTransportError());
        assertTrue(TransportFailure.completion(WcStatus.RNR_RETRY_EXC_ERR).isTransportError());
        assertTrue(TransportFailure.completion(WcStatus.LOC_QP_OP_ERR).isTransportError()); // rxe, interface down
        assertTrue(TransportFailure.event(CmEventType.DISCONNECTED).isTransportError());
        assertTrue(TransportFailure.asyncEvent(AsyncEventType.QP_FATAL).isTransportError());
        // The request itself is wrong: another transport would refuse it the same way.
        assertFalse(TransportFailure.completion(WcStatus.REM_ACCESS_ERR).isTransportError());
        assertFalse(TransportFailure.completion(WcStatus.LOC_PROT_ERR).isTransportError());
        assertFalse(new TransportFailure(TransportFailure.Reason.WRONG_TRANSPORT, "x").isTransportError());
        assertThrows(IllegalArgumentException.class,
                () -> new TransportFailure(TransportFailure.Reason.TIMEOUT, "x", WcStatus.RETRY_EXC_ERR));
    }

    @Test
    void badFailoversAreRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> new TransportFailover(List.of(), FailoverPolicy.defaults(), null));
        TransportRoute r = new TransportRoute(Transport.ROCE_V2, ROCE);
        String e = assertThrows(IllegalArgumentException.class,
                () -> new TransportFailover(List.of(r, r), FailoverPolicy.defaults(), null)).getMessage();
        assertTrue(e.contains("appears twice"), e);
        assertThrows(IllegalArgumentException.class,
                () -> new TransportRoute(Transport.IWARP, InetSocketAddress.createUnresolved("peer", 1)));
        assertThrows(IllegalArgumentException.class, () -> FailoverPolicy.defaults().withAttemptTimeout(Duration.ZERO));
        TransportFailover f = new TransportFailover(List.of(r), FailoverPolicy.defaults(), null);
        assertThrows(IllegalStateException.class,
                () -> f.failed(null, TransportFailure.completion(WcStatus.RETRY_EXC_ERR), TransportFailover.NO_SETUP));
    }

    @Test
    void noRouteLeftListsEveryAttemptAndWhy() {
        FailoverEvent a = new FailoverEvent(FailoverEvent.Kind.ATTEMPT_FAILED, Instant.now(), 1,
                new TransportRoute(Transport.ROCE_V2, ROCE), "rxe0", Duration.ofMillis(12),
                new TransportFailure(TransportFailure.Reason.REJECTED, "reject reason 8"), false);
        FailoverEvent b = new FailoverEvent(FailoverEvent.Kind.ATTEMPT_FAILED, Instant.now(), 2,
                new TransportRoute(Transport.IWARP, IWARP), "siw0", Duration.ofMillis(30),
                new TransportFailure(TransportFailure.Reason.TIMEOUT, "timed out connecting"), false);
        FailoverException e = new FailoverException("no route to the peer could be established", List.of(a, b));
        assertEquals("no route to the peer could be established; tried: attempt 1, RoCEv2 to 10.78.0.2:7471: "
                + "REJECTED (reject reason 8); attempt 2, iWARP to 10.78.1.2:7471: TIMEOUT (timed out connecting)",
                e.getMessage());
        assertEquals(2, e.attempts().size());
        assertTrue(a.toString().endsWith("attempt 1: RoCEv2 to 10.78.0.2:7471 on rxe0 failed after 12 ms: "
                + "REJECTED (reject reason 8)"), a.toString());
    }
}
