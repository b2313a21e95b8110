package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.RecvByteBufAllocator;
import org.rdmapanama.channel.Message;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A channel's read side: received messages wait here until Netty asks to
 * read, then go out as reads of at most the read handle's {@code guess()}
 * bytes: whole messages with the channel's default allocator, and as over
 * NIO one byte a read under a handle that guesses one. The queue needs no
 * bound of its own: credits cap it at the window, so a reader that does not
 * read stops its sender, as TCP's window would. Event loop only.
 */
final class Reads {
    private final RdmaSocketChannel ch;
    private final ArrayDeque<Message> inbound = new ArrayDeque<>();
    private final AtomicInteger heldViews = new AtomicInteger(); // released on any thread
    private boolean pending;
    private boolean scheduled;
    private Runnable atEnd; // the peer's close or SHUT: what it sent before is read first, as before a FIN
    private ByteBuf head; // the view of inbound's first message while it goes out in parts, else null
    private int headRead; // its bytes gone out

    Reads(RdmaSocketChannel ch) {
        this.ch = ch;
    }

    void add(Message m) {
        inbound.add(m);
    }

    void begin() {
        pending = true;
        if (!inbound.isEmpty() && !scheduled) {
            // Not inline: a read() from channelReadComplete would recurse into the next batch.
            scheduled = true;
            ch.eventLoop().execute(() -> {
                scheduled = false;
                drain();
            });
        }
    }

    void clearPending() {
        pending = false;
    }

    /** Fires queued messages as reads while Netty's read handle asks for more, then channelReadComplete. */
    void drain() {
        if (!pending || inbound.isEmpty() || !ch.isOpen()) {
            return;
        }
        RecvByteBufAllocator.Handle h = ch.unsafe().recvBufAllocHandle();
        h.reset(ch.config());
        ChannelPipeline p = ch.pipeline();
        do {
            Message m = inbound.peek();
            if (m == null) {
                break;
            }
            pending = false;
            ByteBuf read = next(m, Math.max(1, h.guess()));
            int len = read.readableBytes();
            h.attemptedBytesRead(len); // the read filled what it asked for: there may be more
            h.lastBytesRead(len);
            h.incMessagesRead(1);
            p.fireChannelRead(read);
        } while (ch.isOpen() && h.continueReading());
        h.readComplete();
        p.fireChannelReadComplete();
        if (atEnd != null && inbound.isEmpty()) {
            Runnable r = atEnd;
            atEnd = null;
            r.run();
        }
    }

    /**
     * The next read of {@code m}, inbound's first: the whole message when it fits {@code most} (no slice,
     * nothing allocated), else a part of it, a retained slice of one view that is let go after the last part.
     */
    private ByteBuf next(Message m, int most) {
        int len = m.length();
        if (head == null && len <= most) {
            inbound.poll();
            return view(m);
        }
        if (head == null) {
            head = view(m);
            headRead = 0;
        }
        int n = Math.min(most, len - headRead);
        ByteBuf part = head.retainedSlice(headRead, n);
        headRead += n;
        if (headRead == len) {
            inbound.poll();
            ByteBuf v = head;
            head = null;
            v.release();
        }
        return part;
    }

    /** The peer's end (a graceful close, a SHUT) runs {@code r} once read up to; false when nothing waits (run it now). */
    boolean endWhenDrained(Runnable r) {
        if (inbound.isEmpty()) {
            return false;
        }
        Runnable before = atEnd; // a SHUT, then the close: both, in that order
        atEnd = before == null ? r : () -> {
            before.run();
            r.run();
        };
        return true;
    }

    /** A view of the message, or past MAX_HELD_VIEWS a copy: an application holding reads must not hold every credit. */
    private ByteBuf view(Message m) {
        int len = m.length();
        if (heldViews.get() >= ch.config().getMaxHeldViews()) {
            ByteBufAllocator a = ch.config().getAllocator();
            // Not in registered memory: the copy is made so that the reader does not hold the channel's memory.
            ByteBuf copy = (a instanceof RdmaByteBufAllocator r ? r.plain() : a).directBuffer(len);
            try {
                copy.writeBytes(m.segment().asSlice(0, len).asByteBuffer());
            } finally {
                m.release();
            }
            return copy;
        }
        return ReceivedBuf.of(ch.config().getAllocator(), m, heldViews);
    }

    /** shutdownInput: what was not read goes back, and the peer's end that waited for it runs. */
    void dropAndEnd() {
        releaseAll();
        Runnable r = atEnd;
        atEnd = null;
        if (r != null) {
            r.run();
        }
    }

    /** At close: what was not read goes back. */
    void releaseAll() {
        if (head != null) {
            inbound.poll(); // its message goes with the view
            ByteBuf v = head;
            head = null;
            v.release();
        }
        Message m;
        while ((m = inbound.poll()) != null) {
            m.release();
        }
    }
}
