package org.rdmapanama.device;

/** {@code IBV_LINK_LAYER_*}: what the port's link runs on. */
public enum LinkLayer {
    UNSPECIFIED, INFINIBAND, ETHERNET;

    /** Maps the C value; unknown values map to a fallback, never throw. */
    public static LinkLayer of(int ibvLinkLayer) {
        return switch (ibvLinkLayer) {
            case 1 -> INFINIBAND;
            case 2 -> ETHERNET;
            default -> UNSPECIFIED;
        };
    }

    @Override
    public String toString() {
        return switch (this) {
            case UNSPECIFIED -> "unspecified";
            case INFINIBAND -> "InfiniBand";
            case ETHERNET -> "Ethernet";
        };
    }
}
