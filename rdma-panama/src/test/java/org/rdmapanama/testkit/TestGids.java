package org.rdmapanama.testkit;

import org.rdmapanama.device.Gid;
import org.rdmapanama.device.GidType;

/** GID table entries for host tests of selection, shaped as rxe, mlx5 and InfiniBand HCAs report them. */
public final class TestGids {
    private TestGids() {}

    /** An IPv4-mapped 10.0.0.{@code index} ({@code ipv4}) or a link-local GID, at {@code index} of the table. */
    public static Gid gid(int index, GidType type, boolean ipv4, int ifindex) {
        byte[] raw = new byte[16];
        if (ipv4) {
            raw[10] = (byte) 0xff;
            raw[11] = (byte) 0xff;
            raw[12] = 10;
        } else {
            raw[0] = (byte) 0xfe;
            raw[1] = (byte) 0x80;
        }
        raw[15] = (byte) index;
        return new Gid(index, raw, type, ifindex);
    }
}
