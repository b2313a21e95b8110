package org.rdmapanama.device;

/** {@code enum ibv_atomic_cap}: whether and how the device does atomics. */
public enum AtomicCapability {
    /** {@code IBV_ATOMIC_NONE}: Compare&amp;Swap and Fetch&amp;Add are refused. */
    NONE,
    /** {@code IBV_ATOMIC_HCA}: atomic with respect to this HCA only. */
    HCA,
    /** {@code IBV_ATOMIC_GLOB}: atomic with respect to CPUs too. */
    GLOBAL;

    /** Maps the C value; unknown values map to a fallback, never throw. */
    public static AtomicCapability of(int ibvAtomicCap) {
        return switch (ibvAtomicCap) {
            case 1 -> HCA;
            case 2 -> GLOBAL;
            default -> NONE;
        };
    }
}
