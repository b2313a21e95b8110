package org.rdmapanama;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * One entry of a port's GID table. For RoCE the GID is the port's IP
 * address (IPv4 mapped as {@code ::ffff:a.b.c.d}); its {@link #type()} says
 * whether the entry sends RoCEv1 or RoCEv2 packets.
 *
 * @param index   the GID index, as given to {@code ibv_modify_qp} in {@code ah_attr.grh.sgid_index}
 * @param raw     the 16 bytes in network order (a copy)
 * @param type    the entry's type
 * @param ifindex the kernel network interface the entry belongs to, or 0
 */
public record Gid(int index, byte[] raw, GidType type, int ifindex) {
    public Gid {
        if (raw.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + raw.length);
        }
        raw = raw.clone();
    }

    @Override
    public byte[] raw() {
        return raw.clone();
    }

    /** True for an IPv4-mapped GID ({@code ::ffff:a.b.c.d}). */
    public boolean isIpv4() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** The address this GID stands for: IPv4 for a mapped GID, else IPv6. */
    public InetAddress address() {
        try {
            return isIpv4()
                    ? InetAddress.getByAddress(Arrays.copyOfRange(raw, 12, 16))
                    : Inet6Address.getByAddress(null, raw, -1);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // lengths are fixed above
        }
    }

    /** As ibv_devinfo -v prints it: eight groups of four hex digits. */
    public String hex() {
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 16; i += 2) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(String.format("%02x%02x", raw[i], raw[i + 1]));
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        InetAddress a = address();
        String text = a instanceof Inet4Address ? "::ffff:" + a.getHostAddress() : a.getHostAddress();
        return "gid[" + index + "] " + text + " " + type;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && g.index == index && g.type == type && g.ifindex == ifindex
                && Arrays.equals(g.raw, raw);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(raw) + index;
    }
}
