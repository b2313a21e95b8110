package org.rdmapanama.verbs;

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

    /** Size of {@link #toBytes()}: address, rkey and length, big-endian. */
    public static final int WIRE_SIZE = 16;

    /** 16 bytes for private data or a message: be64 address, be32 rkey, be32 length (as rping's rdma_info). */
    public byte[] toBytes() {
        if (length > 0xffffffffL) {
            throw new IllegalArgumentException("length " + length + " does not fit the 32-bit wire field");
        }
        return java.nio.ByteBuffer.allocate(WIRE_SIZE).putLong(address).putInt(rkey).putInt((int) length).array();
    }

    /**
     * Reads {@link #toBytes()}'s format from the start of {@code data}; trailing
     * bytes (IB CM pads private data with zeros) are ignored.
     *
     * @throws IllegalArgumentException if {@code data} is shorter than 16 bytes
     */
    public static RemoteBuffer fromBytes(byte[] data) {
        if (data.length < WIRE_SIZE) {
            throw new IllegalArgumentException("a remote buffer description has " + WIRE_SIZE + " bytes, the peer sent "
                    + data.length);
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(data);
        return new RemoteBuffer(b.getLong(), b.getInt(), Integer.toUnsignedLong(b.getInt()));
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
