package org.rdmapanama.verbs;

import java.util.Set;

/**
 * {@code enum ibv_access_flags}: what a memory region allows. Registration
 * is least-privilege: only {@link #LOCAL_WRITE} unless more is asked for.
 */
public enum Access {
    /** The HCA may write here for the local side (receives, RDMA Read results). */
    LOCAL_WRITE(1),
    /** Peers may RDMA Write here (needs LOCAL_WRITE too; added automatically). */
    REMOTE_WRITE(2),
    /** Peers may RDMA Read from here. */
    REMOTE_READ(4),
    /** Peers may run atomics here (needs LOCAL_WRITE; added automatically). */
    REMOTE_ATOMIC(8);

    final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    /** The verbs mask; remote write and atomic imply local write, as the verbs require. */
    static int mask(Set<Access> access) {
        int m = 0;
        for (Access a : access) {
            m |= a.bit;
        }
        if ((m & (REMOTE_WRITE.bit | REMOTE_ATOMIC.bit)) != 0) {
            m |= LOCAL_WRITE.bit;
        }
        return m;
    }
}
