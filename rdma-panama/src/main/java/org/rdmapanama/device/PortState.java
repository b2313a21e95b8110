package org.rdmapanama.device;

/** {@code enum ibv_port_state}. Only {@link #ACTIVE} ports carry traffic. */
public enum PortState {
    NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER, UNKNOWN;

    /** Maps the C value; unknown values map to a fallback, never throw. */
    public static PortState of(int ibvPortState) {
        PortState[] all = values();
        return ibvPortState >= 0 && ibvPortState < UNKNOWN.ordinal() ? all[ibvPortState] : UNKNOWN;
    }
}
