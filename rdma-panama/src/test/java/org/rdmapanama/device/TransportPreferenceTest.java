package org.rdmapanama.device;

import org.rdmapanama.error.NoSuchDeviceException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code transport} key as an ordered preference ({@code rocev2,iwarp}):
 * parsing, the errors for bad lists with where they came from, and selection
 * walking the preference on rxe/siw/InfiniBand-shaped device descriptions.
 */
class TransportPreferenceTest {
    private static final List<RdmaDevice> ALL = SelectionTest.ALL;

    @Test
    void aPreferenceIsParsedInOrderAndTheFirstChoiceIsTheTransport() {
        RdmaConfig c = RdmaConfig.any().withTransport(" rocev2 , iWARP ");
        assertEquals(List.of(Transport.ROCE_V2, Transport.IWARP), c.transports());
        assertEquals(Optional.of(Transport.ROCE_V2), c.transport());
        assertEquals("transport=RoCEv2,iWARP gid=auto", c.toString());
        assertEquals(List.of(Transport.IWARP), RdmaConfig.any().withTransport("iwarp").transports());
        assertTrue(RdmaConfig.any().transports().isEmpty() && RdmaConfig.any().transport().isEmpty());
    }

    @Test
    void theOneTransportConstructorStillWorks() {
        RdmaConfig c = new RdmaConfig(Optional.of(Transport.IWARP), Optional.empty(), Optional.empty(), "auto", Map.of());
        assertEquals(List.of(Transport.IWARP), c.transports());
    }

    @Test
    void emptyUnknownAndDuplicateEntriesAreRefusedByName() {
        String e = assertThrows(IllegalArgumentException.class, () -> RdmaConfig.parseTransports("")).getMessage();
        assertTrue(e.contains("empty entry"), e);
        e = assertThrows(IllegalArgumentException.class, () -> RdmaConfig.parseTransports("rocev2,,iwarp")).getMessage();
        assertTrue(e.contains("'rocev2,,iwarp' has an empty entry"), e);
        e = assertThrows(IllegalArgumentException.class, () -> RdmaConfig.parseTransports("rocev2,carrier-pigeon")).getMessage();
        assertTrue(e.contains("unknown transport 'carrier-pigeon'"), e);
        // An alias names the same transport: roce is RoCEv2.
        e = assertThrows(IllegalArgumentException.class, () -> RdmaConfig.parseTransports("roce,iwarp,rocev2")).getMessage();
        assertTrue(e.contains("names RoCEv2 twice"), e);
        e = assertThrows(IllegalArgumentException.class,
                () -> RdmaConfig.any().withTransports(List.of(Transport.IWARP, Transport.IWARP))).getMessage();
        assertTrue(e.contains("twice"), e);
    }

    @Test
    void errorsNameTheOriginOfTheKey(@TempDir Path dir) throws Exception {
        String e = assertThrows(IllegalArgumentException.class,
                () -> RdmaConfig.load(new Properties(), Map.of("RDMA_TRANSPORT", "iwarp,iwarp"))).getMessage();
        assertTrue(e.contains("names iWARP twice") && e.contains("environment variable RDMA_TRANSPORT"), e);
        Properties props = new Properties();
        props.setProperty("rdma.transport", "rocev2,");
        e = assertThrows(IllegalArgumentException.class, () -> RdmaConfig.load(props, Map.of())).getMessage();
        assertTrue(e.contains("empty entry") && e.contains("system property rdma.transport"), e);
        Path file = dir.resolve("rdma.properties");
        Files.writeString(file, "transport=rocev2,iwarp,ib\n");
        Properties fromFile = new Properties();
        fromFile.setProperty("rdma.config", file.toString());
        RdmaConfig c = RdmaConfig.load(fromFile, Map.of());
        assertEquals(List.of(Transport.ROCE_V2, Transport.IWARP, Transport.INFINIBAND), c.transports());
        assertEquals("config file " + file, c.origins().get("transport"));
    }

    @Test
    void selectionTakesTheFirstPreferredTransportThatADeviceServes() throws Exception {
        assertEquals("siw0", Selection.select(RdmaConfig.any().withTransport("iwarp,rocev2"), ALL).device().name());
        assertEquals("rxe0", Selection.select(RdmaConfig.any().withTransport("rocev2,iwarp"), ALL).device().name());
        // Only siw0 allowed: RoCEv2 is not there, so the second choice is taken.
        Selection s = Selection.select(RdmaConfig.any().withTransport("rocev2,iwarp").withDevice("siw0"), ALL);
        assertEquals(Transport.IWARP, s.transport());
    }

    @Test
    void whenNoPreferredTransportIsServedEveryChoiceIsExplained() {
        String e = assertThrows(NoSuchDeviceException.class,
                () -> Selection.select(RdmaConfig.any().withTransport("ib,iwarp").withDevice("rxe0"), ALL)).getMessage();
        assertTrue(e.contains("transport=InfiniBand,iWARP"), e);
        assertTrue(e.contains("for InfiniBand: ") && e.contains("for iWARP: "), e);
        assertTrue(e.contains("rxe0 (RoCEv2): port 1 is RoCEv2, not iWARP"), e);
    }
}
