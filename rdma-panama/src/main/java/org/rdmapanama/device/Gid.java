package org.rdmapanama.device;

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

    /** The usual text form: {@code ::ffff:10.77.0.1}, or compressed IPv6 such as {@code fe80::1}. */
    public String text() {
        if (isIpv4()) {
            return "::ffff:" + address().getHostAddress();
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((raw[2 * i] & 0xff) << 8) | (raw[2 * i + 1] & 0xff);
        }
        int bestStart = -1, bestLen = 1; // RFC 5952: compress the longest run of 2+ zero groups
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return "gid[" + index + "] " + text() + " " + type;
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
