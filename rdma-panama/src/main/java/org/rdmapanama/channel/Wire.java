package org.rdmapanama.channel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The channel's wire format (docs/guide/channels.md#wire-protocol). Every
 * message starts with a 16-byte header, big-endian:
 * <pre>
 *  0 magic   u16  0x5250 ("RP")
 *  2 version u8   1
 *  3 type    u8   DATA, CREDIT, RNDV, DONE, ADVERTISE, BYE or SHUT
 *  4 credits u16  receives the sender reposted since it last said so
 *  6 flags   u16  CREDIT only: bit 0 REQUEST (the sender waits for credits), bit 1 ANSWER (to one)
 *  8 length  u32  DATA: payload bytes; RNDV: the message's length; else 0
 * 12 token   u32  RNDV and DONE: the rendezvous; else 0
 * </pre>
 * RNDV carries {address u64, rkey u32, region u32} after it (region: which ADVERTISE, counted from 0); ADVERTISE
 * {address u64, length u32, rkey u32}, a region RNDV may name. Connection
 * private data is {magic u16, version u8, zero u8, receives u16, zero u16,
 * slotSize u32, maxMessageSize u32}.
 */
final class Wire {
    private Wire() {}

    static final int HEADER = 16;
    static final int DESCRIPTOR = 16;
    static final int PRIVATE_DATA = 16;
    static final short MAGIC = 0x5250;
    static final byte VERSION = 2; // 2: SHUT

    static final int DATA = 1;
    static final int CREDIT = 2;
    static final int RNDV = 3;
    static final int DONE = 4;
    static final int ADVERTISE = 5;
    static final int BYE = 6;
    /** The sender's half-close: no DATA or RNDV follows; it still receives, and still sends CREDIT and DONE. */
    static final int SHUT = 7;
    static final int FLAG_REQUEST = 1;
    static final int FLAG_ANSWER = 2;

    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    static String typeName(int type) {
        return switch (type) {
            case DATA -> "DATA";
            case CREDIT -> "CREDIT";
            case RNDV -> "RNDV";
            case DONE -> "DONE";
            case ADVERTISE -> "ADVERTISE";
            case BYE -> "BYE";
            case SHUT -> "SHUT";
            default -> "type " + type;
        };
    }

    static void header(MemorySegment s, int type, int credits, int length, int token) {
        s.set(U16, 0, MAGIC);
        s.set(ValueLayout.JAVA_BYTE, 2, VERSION);
        s.set(ValueLayout.JAVA_BYTE, 3, (byte) type);
        s.set(U16, 4, (short) credits);
        s.set(U16, 6, (short) 0);
        s.set(U32, 8, length);
        s.set(U32, 12, token);
    }

    static void flags(MemorySegment s, int flags) {
        s.set(U16, 6, (short) flags);
    }

    static int flags(MemorySegment s) {
        return s.get(U16, 6) & 0xffff;
    }

    /** Rewritten just before posting: credits are counted up to the last moment. */
    static void credits(MemorySegment s, int credits) {
        s.set(U16, 4, (short) credits);
    }

    static int type(MemorySegment s) {
        return s.get(ValueLayout.JAVA_BYTE, 3) & 0xff;
    }

    static int credits(MemorySegment s) {
        return s.get(U16, 4) & 0xffff;
    }

    static int length(MemorySegment s) {
        return s.get(U32, 8);
    }

    static int token(MemorySegment s) {
        return s.get(U32, 12);
    }

    static long address(MemorySegment s) {
        return s.get(U64, HEADER);
    }

    /**
     * Checks what every message must satisfy and returns its type; throws
     * naming the first field that is wrong. {@code bytes} is what arrived.
     */
    static int check(MemorySegment s, int bytes, int slotSize) throws ProtocolException {
        if (bytes < HEADER) {
            throw new ProtocolException("a message of " + bytes + " bytes is shorter than the " + HEADER + "-byte header");
        }
        short magic = s.get(U16, 0);
        if (magic != MAGIC) {
            throw new ProtocolException("magic 0x" + Integer.toHexString(magic & 0xffff) + " is not 0x5250");
        }
        int version = s.get(ValueLayout.JAVA_BYTE, 2) & 0xff;
        if (version != VERSION) {
            throw new ProtocolException("version " + version + " is not " + VERSION);
        }
        int flags = flags(s);
        if ((flags & ~(FLAG_REQUEST | FLAG_ANSWER)) != 0) {
            throw new ProtocolException("header flags 0x" + Integer.toHexString(flags) + " have unknown bits");
        }
        int type = type(s);
        int length = length(s);
        int expected = switch (type) {
            case DATA -> {
                if (length < 0 || length > slotSize - HEADER) {
                    throw new ProtocolException("DATA length " + Integer.toUnsignedString(length)
                            + " does not fit a " + slotSize + "-byte slot");
                }
                yield HEADER + length;
            }
            case CREDIT, DONE, BYE, SHUT -> {
                requireZeroLength(type, length);
                yield HEADER;
            }
            case RNDV -> HEADER + DESCRIPTOR;
            case ADVERTISE -> {
                requireZeroLength(type, length);
                yield HEADER + DESCRIPTOR;
            }
            default -> throw new ProtocolException("unknown message type " + type);
        };
        if (bytes != expected) {
            throw new ProtocolException(typeName(type) + " message of " + bytes + " bytes, expected " + expected);
        }
        return type;
    }

    private static void requireZeroLength(int type, int length) throws ProtocolException {
        if (length != 0) {
            throw new ProtocolException(typeName(type) + " length is " + Integer.toUnsignedString(length) + ", not 0");
        }
    }

    static byte[] privateData(int receives, int slotSize, int maxMessageSize) {
        byte[] b = new byte[PRIVATE_DATA];
        MemorySegment s = MemorySegment.ofArray(b);
        s.set(U16, 0, MAGIC);
        s.set(ValueLayout.JAVA_BYTE, 2, VERSION);
        s.set(U16, 4, (short) receives);
        s.set(U32, 8, slotSize);
        s.set(U32, 12, maxMessageSize);
        return b;
    }

    /** What a peer promised at connection time. */
    record Peer(int receives, int slotSize, int maxMessageSize) {}

    /** Parses a peer's private data (RoCE pads it; iWARP delivers it as sent). */
    static Peer peer(byte[] data) throws ProtocolException {
        if (data.length < PRIVATE_DATA) {
            throw new ProtocolException("the peer's private data has " + data.length + " bytes, not "
                    + PRIVATE_DATA + ": not an rdma-panama channel");
        }
        MemorySegment s = MemorySegment.ofArray(data);
        short magic = s.get(U16, 0);
        if (magic != MAGIC) {
            throw new ProtocolException("the peer's private data has magic 0x" + Integer.toHexString(magic & 0xffff)
                    + ", not 0x5250: not an rdma-panama channel");
        }
        int version = s.get(ValueLayout.JAVA_BYTE, 2) & 0xff;
        if (version != VERSION) {
            throw new ProtocolException("the peer speaks channel protocol version " + version + ", not " + VERSION);
        }
        int receives = s.get(U16, 4) & 0xffff;
        int slotSize = s.get(U32, 8);
        int max = s.get(U32, 12);
        if (receives < 4) {
            throw new ProtocolException("the peer posts " + receives + " receives; at least 4 are needed");
        }
        if (slotSize < 64 || Integer.bitCount(slotSize) != 1 || slotSize > 1 << 24) {
            throw new ProtocolException("the peer's slot size " + Integer.toUnsignedString(slotSize)
                    + " is not a power of two in 64..16 MiB");
        }
        if (max < 1 || max > 1 << 30) {
            throw new ProtocolException("the peer's largest message " + Integer.toUnsignedString(max)
                    + " is not in 1..1 GiB");
        }
        return new Peer(receives, slotSize, max);
    }
}
