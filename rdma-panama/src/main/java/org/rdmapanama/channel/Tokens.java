package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;

import java.util.BitSet;

/**
 * A sender's rendezvous bookkeeping, on its loop thread: the buffers the peer
 * is to read, by the token their RNDV named (one comes back with each DONE),
 * and the registered chunks already advertised to the peer.
 */
final class Tokens {
    private final MessageBuffer[] held;
    private final int[] free;
    private int freeCount;
    private final BitSet advertised = new BitSet();
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

    /** True the first time {@code chunk} is named on this channel: then it must be advertised. */
    boolean firstUse(int chunk) throws RdmaException {
        if (advertised.get(chunk)) {
            return false;
        }
        if (advertisedCount == ReceiveSide.MAX_PEER_REGIONS) {
            throw new RdmaException("a rendezvous from a chunk beyond the " + ReceiveSide.MAX_PEER_REGIONS
                    + " registered chunks a peer may be told of: the group's pool holds too much for rendezvous;"
                    + " queue fewer large messages (ChannelOptions.sendQueueLimit) or reuse buffers");
        }
        advertisedCount++;
        advertised.set(chunk);
        return true;
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
