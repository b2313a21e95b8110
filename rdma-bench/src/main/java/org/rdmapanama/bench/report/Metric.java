package org.rdmapanama.bench.report;

/** What a raw.csv row measures, and which way is better. */
public record Metric(String name, String unit, boolean lowerIsBetter, String description) {

    /** The metrics the runners write; an unknown one is an error, not a guess at its direction. */
    public static Metric of(String name, String unit) {
        return switch (name) {
            case "t_typical" -> new Metric(name, unit, true, "latency, t_typical");
            case "bw_average" -> new Metric(name, unit, false, "bandwidth, BW average");
            case "msg_rate" -> new Metric(name, unit, false, "message rate, MsgRate");
            case "session_rate" -> new Metric(name, unit, false, "whole sessions (connect, one message, close)");
            case "cold_rate" -> new Metric(name, unit, false, "sessions, cold (from exec)");
            case "warm_rate" -> new Metric(name, unit, false, "sessions, warm (JVM's last batch)");
            case "connect_rate" -> new Metric(name, unit, false, "connection set-up");
            case "setup_ms" -> new Metric(name, unit, true, "rdma_cm set-up of one connection (resolve to established)");
            default -> throw new IllegalArgumentException("unknown metric '" + name
                    + "' (known: t_typical, bw_average, msg_rate, session_rate, cold_rate, warm_rate, connect_rate, setup_ms)");
        };
    }

    /** A plot panel's title, e.g. {@code rxe0 (RoCEv2): latency, t_typical [usec], lower is better}. */
    public String title(String device, String transport) {
        return device + " (" + transport + "): " + description + " [" + unit + "], " + (lowerIsBetter ? "lower" : "higher") + " is better";
    }
}
