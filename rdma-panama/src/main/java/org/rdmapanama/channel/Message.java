package org.rdmapanama.channel;

import java.lang.foreign.MemorySegment;

/**
 * A received message: a view of the registered memory it landed in (a
 * receive slot, or the pool buffer a rendezvous read filled). It stays the
 * receiver's until {@link #release()}, which gives the memory back: a slot
 * is posted again and its credit returns to the sender. Until then the
 * sender has one message less it may send, so release promptly; a message
 * used after release throws.
 */
public final class Message extends LoopTask {
    MessageChannel channel; // a slot of a loop's shared receive queue serves whichever channel it lands on
    /** The receive slot it arrived in, or -1 for a rendezvous message. */
    final int slot;
    private final MemorySegment slotPayload;
    MessageBuffer buffer; // rendezvous: the pool buffer read into
    int length;
    int token; // rendezvous: the sender's
    boolean ready; // rendezvous: read complete
    long remoteAddress; // rendezvous: where the sender's bytes are
    int remoteKey;
    private volatile boolean held;
    private Object attachment;

    Message(MessageChannel channel, int slot, MemorySegment slotPayload) {
        this.channel = channel;
        this.slot = slot;
        this.slotPayload = slotPayload;
    }

    /** The message's bytes start at offset 0; {@link #length()} of them are the message. */
    public MemorySegment segment() {
        requireHeld();
        return slot >= 0 ? slotPayload : buffer.payloadView();
    }

    public int length() {
        return length;
    }

    /**
     * Keeps {@code value} with this message object, which the channel reuses for every message that lands
     * in its slot: what a framework wraps around a message is made once per slot, not once per message.
     */
    public void attach(Object value) {
        attachment = value;
    }

    public Object attachment() {
        return attachment;
    }

    public MessageChannel channel() {
        return channel;
    }

    /** Gives the memory back (from any thread); a second release throws. */
    public void release() {
        requireHeld();
        held = false;
        channel.release(this);
    }

    void hold() {
        held = true;
    }

    boolean isHeld() {
        return held;
    }

    private void requireHeld() {
        if (!held) {
            throw new IllegalStateException("this message was released: its memory may hold another message now");
        }
    }
}
