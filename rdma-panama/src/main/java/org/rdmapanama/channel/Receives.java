package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ConfinedPoster;

import java.lang.foreign.MemorySegment;

/**
 * Where a channel's receive slots come from: its own queue pair's receive
 * queue ({@link QpReceives}), or its loop's shared receive queue
 * ({@link SrqReceives}). Either way the channel promises its peer no more
 * than {@code window + 2} receives, and a credit goes back only for a receive
 * that is posted (or, with the SRQ, for one the SRQ has to spare).
 */
abstract class Receives {
    /** Header and payload of {@code slot}. */
    abstract MemorySegment slot(int slot);

    /** The {@link Message} that shows {@code slot}'s payload, bound to this channel. */
    abstract Message message(int slot);

    /** Before the channel is connected: the peer may send as soon as it is. */
    abstract void postInitial() throws RdmaException;

    void activate(ConfinedPoster poster) {
    }

    /** {@code slot} may take a message again; {@code credited}: the peer gets a credit for it once it is posted. */
    abstract void repost(int slot, boolean credited);

    /** Posts what {@link #repost} collected. */
    abstract void postReposts() throws RdmaException;

    /** A receive of this channel completed. */
    abstract void completed();

    /** Receives posted for this channel and not completed: what a drain waits for. */
    abstract int outstanding();

    /** Whether the receives come from the loop's SRQ (no receive flushes when the QP fails). */
    abstract boolean shared();

    /** A message the user held past the channel's finish was released. */
    abstract void releasedAfterClose(int slot);

    /** The channel finished, its QP destroyed: slots not held by a message the user still has go back. */
    abstract void recycle();
}
