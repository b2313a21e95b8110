package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;

import java.util.Arrays;

/**
 * A sender's rendezvous bookkeeping, on its loop thread: the buffers the peer
 * is to read, by the token their RNDV named (one comes back with each DONE),
 * and the registered chunks already advertised to the peer, each by the
 * index (the order of its ADVERTISE) that a RNDV names it by.
 */
final class Tokens {
    private final MessageBuffer[] held;
    private final int[] free;
    private int freeCount;
    private int[] regionOfChunk = new int[16]; // chunk -> region index + 1; 0: not advertised yet
    private int advertisedCount;

    Tokens(int count) {
        held = new MessageBuffer[count];
        free = new int[count];
        for (int t = count - 1; t >= 0; t--) {
            free[freeCount++] = t;
        }
    }

    boolean available() {
        return freeCount > 0;
    }

    /** No rendezvous waits for the peer's read. */
    boolean allBack() {
        return freeCount == held.length;
    }

    int take(MessageBuffer b) {
        int t = free[--freeCount];
        held[t] = b;
        return t;
    }

    /** The peer read the rendezvous of {@code token}: its buffer goes back to the pool. */
    void done(int token) throws ProtocolException {
        if (token < 0 || token >= held.length || held[token] == null) {
            throw new ProtocolException("DONE for token " + Integer.toUnsignedString(token)
                    + ", which is not an outstanding rendezvous");
        }
        held[token].recycle();
        held[token] = null;
        free[freeCount++] = token;
    }

    /** The index by which the peer knows {@code chunk}, or -1 when it must be advertised first. */
    int region(int chunk) {
        return chunk < regionOfChunk.length ? regionOfChunk[chunk] - 1 : -1;
    }

    /** Gives {@code chunk} the next region index, to be sent in an ADVERTISE before any RNDV names it. */
    int advertise(int chunk) throws RdmaException {
        if (advertisedCount == ReceiveSide.MAX_PEER_REGIONS) {
            throw new RdmaException("a rendezvous from a chunk beyond the " + ReceiveSide.MAX_PEER_REGIONS
                    + " registered chunks a peer may be told of: the group's pool holds too much for rendezvous;"
                    + " queue fewer large messages (ChannelOptions.sendQueueLimit) or reuse buffers");
        }
        if (chunk >= regionOfChunk.length) {
            regionOfChunk = Arrays.copyOf(regionOfChunk, Math.max(chunk + 1, regionOfChunk.length * 2));
        }
        regionOfChunk[chunk] = ++advertisedCount;
        return advertisedCount - 1;
    }

    void recycleAll() {
        for (int t = 0; t < held.length; t++) {
            if (held[t] != null) {
                held[t].recycle();
                held[t] = null;
            }
        }
    }
}
