package org.rdmapanama.channel;

/**
 * A channel's send queue as posted, on its loop thread: each slot holds the buffer of a send (until its
 * completion, or none when its data went inline) or the message a rendezvous read fills. A signaled
 * completion covers the sends posted before it, but a read is done only at its own completion: siw completes
 * a send at transmission, before an earlier read's response came, and taking that as covering the read let
 * the peer reuse its buffer before it was read.
 */
final class SendSlots {
    /** What becomes of a read whose own completion came, in posting order. */
    interface ReadDone {
        void readDone(Message r);
    }

    private final int depth;
    private final int mask;
    private final MessageBuffer[] buffers;
    private final Message[] reads;
    private final boolean[] readLanded;
    private final boolean[] inline;
    private long posted;
    private long done;
    private long covered = -1; // the furthest position a completion has covered

    SendSlots(int depth) {
        this.depth = depth;
        int ring = Integer.highestOneBit(Math.max(2, depth) - 1) << 1;
        this.mask = ring - 1;
        this.buffers = new MessageBuffer[ring];
        this.reads = new Message[ring];
        this.readLanded = new boolean[ring];
        this.inline = new boolean[ring];
    }

    /** Whether {@code more} slots beyond those posted are free. */
    boolean hasRoom(int more) {
        return posted + more - done < depth;
    }

    /** The slot of the {@code n}th work request after those posted. */
    int next(int n) {
        return (int) ((posted + n) & mask);
    }

    /** Posted and not completed yet. */
    long unfinished() {
        return posted - done;
    }

    void putSend(int slot, MessageBuffer b, boolean isInline) {
        buffers[slot] = b;
        inline[slot] = isInline;
    }

    void putRead(int slot, Message m) {
        reads[slot] = m;
        inline[slot] = false;
    }

    /** {@code n} work requests went out: the buffers of inline sends go back at once (their data was copied). */
    void posted(int n) {
        long first = posted;
        posted += n;
        for (long p = first; p < posted; p++) {
            int i = (int) (p & mask);
            if (inline[i]) {
                inline[i] = false;
                buffers[i].recycle();
                buffers[i] = null;
            }
        }
    }

    /**
     * The work request in {@code slot} completed: it and the sends before it are done. A read before it that has
     * not had its own completion holds the queue there (its slot, and the buffers after it) until it has.
     * Returns false for a completion of nothing posted.
     */
    boolean complete(int slot, ReadDone onRead) {
        long at = done + ((slot - (int) done) & mask);
        if (at >= posted) {
            return false; // stale: never posted
        }
        if (reads[slot] != null) {
            readLanded[slot] = true;
        }
        if (at > covered) {
            covered = at;
        }
        long p = done;
        for (; p <= covered; p++) {
            int i = (int) (p & mask);
            Message r = reads[i];
            if (r != null) {
                if (!readLanded[i]) {
                    break;
                }
                reads[i] = null;
                readLanded[i] = false;
                onRead.readDone(r);
            }
            MessageBuffer b = buffers[i];
            if (b != null) {
                buffers[i] = null;
                b.recycle();
            }
        }
        done = p;
        return true;
    }

    /** Finished: buffers of sends and reads whose completions never came go back to the pool. */
    void recycleAll() {
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                buffers[i].recycle();
                buffers[i] = null;
            }
            Message r = reads[i];
            if (r != null && r.buffer != null) {
                r.buffer.recycle();
                r.buffer = null;
                reads[i] = null;
            }
            readLanded[i] = false;
        }
    }
}
