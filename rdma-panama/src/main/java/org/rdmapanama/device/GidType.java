package org.rdmapanama.device;

/** {@code enum ibv_gid_type}: how a GID table entry is used on the wire. */
public enum GidType {
    /** {@code IBV_GID_TYPE_IB}: InfiniBand, or an iWARP device's address GID. */
    IB,
    /** {@code IBV_GID_TYPE_ROCE_V1}. */
    ROCE_V1,
    /** {@code IBV_GID_TYPE_ROCE_V2}. */
    ROCE_V2,
    /** The provider could not say (it lacks {@code ibv_query_gid_ex}). */
    UNKNOWN;

    /** Maps the C value; unknown values map to a fallback, never throw. */
    public static GidType of(int ibvGidType) {
        return switch (ibvGidType) {
            case 0 -> IB;
            case 1 -> ROCE_V1;
            case 2 -> ROCE_V2;
            default -> UNKNOWN;
        };
    }

    @Override
    public String toString() {
        return switch (this) {
            case IB -> "IB";
            case ROCE_V1 -> "RoCEv1";
            case ROCE_V2 -> "RoCEv2";
            case UNKNOWN -> "unknown";
        };
    }
}
