package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A loop's channels by the id their work request ids carry, with a generation
 * per id so that a late completion of a finished channel finds no successor,
 * and the completion queue entries each channel has reserved.
 */
final class ChannelTable {
    static final int MAX_CHANNELS = 1 << 16;

    private final String name;
    private final int cqSize;
    private final AtomicReferenceArray<MessageChannel> table = new AtomicReferenceArray<>(MAX_CHANNELS);
    private final int[] generations = new int[MAX_CHANNELS]; // guarded by this
    private final int[] freeIds = new int[MAX_CHANNELS]; // guarded by this
    private int freeIdCount; // guarded by this
    private int nextId; // guarded by this
    private int cqReserved; // guarded by this
    private int channels; // guarded by this

    ChannelTable(String name, int cqSize) {
        this.name = name;
        this.cqSize = cqSize;
    }

    /** An id (and its generation) for a new channel that may have {@code cqEntries} completions outstanding. */
    synchronized long reserve(int cqEntries) throws RdmaException {
        if (cqReserved + cqEntries > cqSize) {
            throw new RdmaException(name + ": a channel needs " + cqEntries + " completion queue entries, and "
                    + (cqSize - cqReserved) + " of " + cqSize + " are left (" + channels
                    + " channels); raise ChannelOptions.cqSize or loops, or shrink the window");
        }
        int id;
        if (freeIdCount > 0) {
            id = freeIds[--freeIdCount];
        } else if (nextId < MAX_CHANNELS) {
            id = nextId++;
        } else {
            throw new RdmaException(name + " has " + MAX_CHANNELS + " channels already");
        }
        cqReserved += cqEntries;
        channels++;
        return (long) id << 32 | (generations[id] & 0xff);
    }

    /** Gives back a reservation whose channel was never made, or is finished. */
    synchronized void unreserve(int id, int cqEntries) {
        generations[id]++;
        freeIds[freeIdCount++] = id;
        cqReserved -= cqEntries;
        channels--;
    }

    /** Makes {@code ch} reachable from its completions: before anything is posted for it. */
    void publish(MessageChannel ch) {
        table.set(ch.id, ch);
    }

    void remove(MessageChannel ch) {
        table.compareAndSet(ch.id, ch, null);
        unreserve(ch.id, ch.cqEntries());
    }

    /** The channel of a completion's id and generation, or null when that channel is gone. */
    MessageChannel get(int id, int generation) {
        MessageChannel ch = table.get(id);
        return ch == null || (ch.generation & 0xff) != generation ? null : ch;
    }

    /** Every channel, for {@code visit}; {@code drop} takes them out of reach. */
    void forEach(java.util.function.Consumer<MessageChannel> visit, boolean drop) {
        for (int i = 0; i < MAX_CHANNELS; i++) {
            MessageChannel ch = table.get(i);
            if (ch != null) {
                visit.accept(ch);
                if (drop) {
                    table.set(i, null);
                }
            }
        }
    }

    /** Ids from 0 up to this one have been used; those above never. */
    synchronized int idLimit() {
        return nextId;
    }

    MessageChannel at(int id) {
        return table.get(id);
    }

    synchronized int count() {
        return channels;
    }
}
