package org.rdmapanama.device;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Which device, port and GID a service uses, and on which transport: the
 * keys {@code transport}, {@code device}, {@code port} and {@code gid}.
 * <p>
 * {@link #load()} reads each key from the first of these that sets it:
 * <ol>
 *   <li>the system property {@code rdma.KEY} (e.g. {@code -Drdma.transport=iwarp});</li>
 *   <li>the environment variable {@code RDMA_KEY} (e.g. {@code RDMA_DEVICE=rxe0});</li>
 *   <li>the properties file named by {@code -Drdma.config=FILE} or {@code RDMA_CONFIG=FILE},
 *       with lines such as {@code transport=rocev2} (or {@code rdma.transport=rocev2}).</li>
 * </ol>
 * Unset keys mean "any": the first ACTIVE port of any device, and the
 * automatic GID. Values: {@code transport} is one of {@code iwarp},
 * {@code rocev2} ({@code roce}), {@code rocev1}, {@code ib}, or an ordered
 * preference of them separated by commas ({@code rocev2,iwarp}: RoCEv2 where
 * it can be had, else iWARP); {@code port} a number from 1; {@code gid} an
 * index, {@code auto} (RoCEv2 IPv4, else IPv6) or {@code auto-ipv6} (RoCEv2
 * IPv6 first).
 * <p>
 * {@link Selection#select} walks the preference in order; connections follow
 * it across transports with {@code org.rdmapanama.failover.TransportFailover}.
 *
 * @param transports the transports asked for, most preferred first, or empty for any
 * @param device    the device name asked for, or empty for any
 * @param port      the port asked for, or empty for the first active one
 * @param gid       {@code auto}, {@code auto-ipv6} or an index
 * @param origins   for each key that was set, where it came from (for error messages)
 */
public record RdmaConfig(List<Transport> transports, Optional<String> device, Optional<Integer> port,
                         String gid, Map<String, String> origins) {
    public static final String[] KEYS = {"transport", "device", "port", "gid"};

    public RdmaConfig {
        origins = Map.copyOf(origins);
        transports = List.copyOf(transports);
        if (transports.size() != transports.stream().distinct().count()) {
            throw new IllegalArgumentException("transport preference " + transports + " names a transport twice"
                    + origin(origins, "transport"));
        }
        if (!gid.equals("auto") && !gid.equals("auto-ipv6")) {
            try {
                if (Integer.parseInt(gid) < 0) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("gid must be auto, auto-ipv6 or an index >= 0, got '" + gid + "'"
                        + origin(origins, "gid"));
            }
        }
        if (port.isPresent() && port.get() < 1) {
            throw new IllegalArgumentException("port numbers start at 1, got " + port.get() + origin(origins, "port"));
        }
    }

    /** One transport or none: the form this record had before preferences. */
    public RdmaConfig(Optional<Transport> transport, Optional<String> device, Optional<Integer> port, String gid,
                      Map<String, String> origins) {
        this(transport.map(List::of).orElse(List.of()), device, port, gid, origins);
    }

    /** The first choice of {@link #transports()}, or empty for any. */
    public Optional<Transport> transport() {
        return transports.isEmpty() ? Optional.empty() : Optional.of(transports.getFirst());
    }

    /**
     * Parses {@code rocev2}, or an ordered preference such as {@code rocev2,iwarp}.
     *
     * @throws IllegalArgumentException for an empty preference or entry, an unknown transport, or one
     *                                  named twice (also as an alias: {@code roce,rocev2})
     */
    public static List<Transport> parseTransports(String value) {
        List<Transport> list = new ArrayList<>();
        String[] entries = value.split(",", -1);
        for (String entry : entries) {
            if (entry.isBlank()) {
                throw new IllegalArgumentException("transport preference '" + value + "' has an empty entry;"
                        + " expected transports separated by commas, e.g. rocev2,iwarp");
            }
            Transport t = Transport.parse(entry);
            if (list.contains(t)) {
                throw new IllegalArgumentException("transport preference '" + value + "' names " + t.displayName()
                        + " twice; each transport may appear once");
            }
            list.add(t);
        }
        return list;
    }

    private static String origin(Map<String, String> origins, String key) {
        String o = origins.get(key);
        return o == null ? "" : " (from " + o + ")";
    }

    /** Nothing asked: any device, first active port, automatic GID. */
    public static RdmaConfig any() {
        return new RdmaConfig(List.of(), Optional.empty(), Optional.empty(), "auto", Map.of());
    }

    public static RdmaConfig of(String transport, String device) {
        return any().withTransport(transport).withDevice(device);
    }

    /** {@code value} is one transport or a preference, as the {@code transport} key takes. */
    public RdmaConfig withTransport(String value) {
        return value == null ? this : withTransports(parseTransports(value));
    }

    /** The preference {@code list}, most preferred first; empty means any. */
    public RdmaConfig withTransports(List<Transport> list) {
        return new RdmaConfig(list, device, port, gid, origins);
    }

    public RdmaConfig withDevice(String value) {
        return value == null ? this : new RdmaConfig(transports, Optional.of(value), port, gid, origins);
    }

    public RdmaConfig withPort(int value) {
        return new RdmaConfig(transports, device, Optional.of(value), gid, origins);
    }

    public RdmaConfig withGid(String value) {
        return value == null ? this : new RdmaConfig(transports, device, port, value, origins);
    }

    /** Reads the configuration from system properties, the environment and the optional file. */
    public static RdmaConfig load() {
        return load(System.getProperties(), System.getenv());
    }

    /** {@link #load()} with explicit sources, for tests and embedders. */
    public static RdmaConfig load(Properties systemProperties, Map<String, String> environment) {
        Properties file = new Properties();
        String fileName = systemProperties.getProperty("rdma.config", environment.get("RDMA_CONFIG"));
        if (fileName != null && !fileName.isBlank()) {
            try (Reader r = Files.newBufferedReader(Path.of(fileName))) {
                file.load(r);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the RDMA config file '" + fileName + "': " + e, e);
            }
        }
        Map<String, String> values = new LinkedHashMap<>();
        Map<String, String> origins = new LinkedHashMap<>();
        for (String key : KEYS) {
            String prop = "rdma." + key;
            String env = "RDMA_" + key.toUpperCase(Locale.ROOT);
            String v;
            if ((v = systemProperties.getProperty(prop)) != null) {
                origins.put(key, "system property " + prop);
            } else if ((v = environment.get(env)) != null) {
                origins.put(key, "environment variable " + env);
            } else if ((v = file.getProperty(key, file.getProperty(prop))) != null) {
                origins.put(key, "config file " + fileName);
            }
            if (v != null && !v.isBlank()) {
                values.put(key, v.trim());
            }
        }
        List<Transport> transports;
        try {
            transports = values.containsKey("transport") ? parseTransports(values.get("transport")) : List.of();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + origin(origins, "transport"), e);
        }
        Optional<Integer> port;
        try {
            port = Optional.ofNullable(values.get("port")).map(Integer::parseInt);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port must be a number, got '" + values.get("port") + "'"
                    + origin(origins, "port"), e);
        }
        return new RdmaConfig(transports, Optional.ofNullable(values.get("device")), port,
                values.getOrDefault("gid", "auto").toLowerCase(Locale.ROOT), origins);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        if (!transports.isEmpty()) {
            sb.append("transport=").append(String.join(",", transports.stream().map(Transport::displayName).toList()))
                    .append(' ');
        }
        device.ifPresent(d -> sb.append("device=").append(d).append(' '));
        port.ifPresent(p -> sb.append("port=").append(p).append(' '));
        sb.append("gid=").append(gid);
        return sb.toString();
    }
}
