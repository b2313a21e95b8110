package org.rdmapanama;

/**
 * A peer's registered memory as this side addresses it for RDMA Read, Write
 * and atomics: what travels in rdma_cm private data or an out-of-band message.
 *
 * @param address the peer's virtual address of the first byte
 * @param rkey    the peer region's remote key
 * @param length  how many bytes may be accessed from {@code address}
 */
public record RemoteBuffer(long address, int rkey, long length) {
    public RemoteBuffer {
        if (length < 0) {
            throw new IllegalArgumentException("negative remote buffer length " + length);
        }
    }

    /** Checks that {@code [offset, offset + size)} lies inside this buffer. */
    public long at(long offset, long size) {
        if (offset < 0 || size < 0 || offset > length - size) {
            throw new IndexOutOfBoundsException("remote range [" + offset + ", " + (offset + size)
                    + ") outside the peer's " + length + "-byte buffer");
        }
        return address + offset;
    }
}
