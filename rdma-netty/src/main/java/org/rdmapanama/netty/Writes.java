package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;

import java.lang.foreign.MemorySegment;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;

/**
 * A channel's write path: Netty's flushed buffers sent while the message
 * channel is writable. A buffer of the transport's allocator that nothing else
 * holds is sent where it lies; others are copied into registered buffers.
 * Consecutive small buffers share one eager message, copied (one credit for a
 * flush of HTTP/2 frames, not one per frame); a large one goes alone, cut at
 * the largest message. A composite's large components of the allocator go
 * without a copy as messages of their own ({@link #gather}). The sends of one
 * doWrite are queued on the message channel and posted at the loop's next
 * flush, as chained post lists.
 */
final class Writes implements ChannelOutboundBuffer.MessageProcessor {
    private final ArrayDeque<ByteBuf> batch = new ArrayDeque<>();
    private final ChannelGroup group;
    private final int eagerLimit;
    private final int maxMessage;
    private int total;
    private long copied;

    Writes(ChannelGroup group, int eagerLimit, int maxMessage) {
        this.group = group;
        this.eagerLimit = eagerLimit;
        this.maxMessage = maxMessage;
    }

    /** Sends until the buffer is empty or the channel not writable (its onWritabilityChanged flushes again). */
    void write(MessageChannel mc, ChannelOutboundBuffer in) throws Exception {
        try {
            while (in.current() != null && mc.isWritable()) {
                ByteBuf buf = (ByteBuf) in.current();
                int len = buf.readableBytes();
                MessageBuffer own;
                if (len == 0) {
                    in.remove();
                } else if ((len >= eagerLimit || in.size() == 1) && len <= maxMessage
                        && buf instanceof RegisteredBuf r && (own = r.takeForSend(group)) != null) {
                    send(mc, own, len);
                    in.remove();
                } else if (len >= eagerLimit && buf instanceof CompositeByteBuf c) {
                    in.removeBytes(gather(mc, c));
                } else if (len >= eagerLimit) {
                    int n = Math.min(len, maxMessage);
                    sendCopy(mc, buf, buf.readerIndex(), n);
                    in.removeBytes(n);
                } else {
                    batch.clear();
                    total = 0;
                    in.forEachFlushedMessage(this);
                    send(mc, copyBatch(mc), total);
                    // By bytes, not by count: the batch skipped cancelled writes, which remove() would count.
                    in.removeBytes(total);
                }
            }
        } catch (ClosedResourceException e) {
            // Closed under the write (the peer's close not handled yet): an IOException, so that Netty closes too.
            ClosedChannelException c = new ClosedChannelException();
            c.initCause(e);
            throw c;
        } catch (RuntimeException e) {
            // Refused (a size, a full queue): as an IOException Netty closes the channel, where any other
            // exception would only shut its output down, and the peer would wait for the rest.
            throw new java.io.IOException(mc + ": " + e.getMessage(), e);
        }
    }

    /**
     * A composite from its reader index, while the channel is writable: each large component that is a
     * registered buffer of this transport held by nothing else (nor the composite by anything else) goes as
     * a message of its own, without a copy; the bytes between such components are copied, each run into one
     * message (cut at the largest message). The reader sees one stream: message boundaries are not its.
     * Returns the bytes sent, past which the composite never reads a taken component again.
     */
    private int gather(MessageChannel mc, CompositeByteBuf c) throws RdmaException {
        int from = c.readerIndex(), end = c.writerIndex();
        int run = from; // the first byte not sent: the copied run starts there
        boolean sole = c.refCnt() == 1;
        int components = c.numComponents();
        for (int ci = c.toComponentIndex(from), pos = from; pos < end; ci++) {
            int start = c.toByteIndex(ci);
            int pieceEnd = Math.min(end, ci + 1 < components ? c.toByteIndex(ci + 1) : c.capacity());
            int n = pieceEnd - pos;
            if (sole && n >= eagerLimit && n <= maxMessage) {
                // The component as the composite holds it: the buffer itself, or a slice or duplicate of it.
                // A nested composite is not unwrapped: whoever else holds it would read a buffer sent away.
                ByteBuf view = c.internalComponent(ci);
                if ((view instanceof RegisteredBuf ? view : view.unwrap()) instanceof RegisteredBuf r
                        && r.refCnt() == 1) {
                    run = copyRun(mc, c, run, pos);
                    if (run < pos || !mc.isWritable()) {
                        return run - from;
                    }
                    int at = r.locate(view, pos - start, n);
                    MessageBuffer own = at < 0 ? null : r.take(group, at, n);
                    if (own != null) {
                        send(mc, own, n);
                        run = pieceEnd;
                    }
                }
            }
            pos = pieceEnd;
        }
        return copyRun(mc, c, run, end) - from;
    }

    /** Copies bytes {@code from..to} of {@code c}, each message up to the largest; returns where it stopped. */
    private int copyRun(MessageChannel mc, CompositeByteBuf c, int from, int to) throws RdmaException {
        while (from < to && mc.isWritable()) {
            int n = Math.min(to - from, maxMessage);
            sendCopy(mc, c, from, n);
            from += n;
        }
        return from;
    }

    private void sendCopy(MessageChannel mc, ByteBuf buf, int index, int n) throws RdmaException {
        MessageBuffer mb = mc.allocate(n);
        try {
            buf.getBytes(index, mb.segment().asSlice(0, n).asByteBuffer());
        } catch (RuntimeException e) {
            mb.release();
            throw e;
        }
        send(mc, mb, n);
        copied += n;
    }

    /** Bytes copied into registered buffers so far: tests tell a copy from a buffer sent where it lies. */
    long copied() {
        return copied;
    }

    @Override
    public boolean processMessage(Object msg) {
        if (!(msg instanceof ByteBuf b) || total + b.readableBytes() > eagerLimit) {
            return false;
        }
        total += b.readableBytes();
        batch.add(b);
        return true;
    }

    private MessageBuffer copyBatch(MessageChannel mc) throws RdmaException {
        MessageBuffer mb = mc.allocate(total);
        try {
            MemorySegment seg = mb.segment();
            long off = 0;
            for (ByteBuf b : batch) {
                int l = b.readableBytes();
                b.getBytes(b.readerIndex(), seg.asSlice(off, l).asByteBuffer());
                off += l;
            }
        } catch (RuntimeException e) {
            mb.release();
            throw e;
        } finally {
            batch.clear();
        }
        copied += total;
        return mb;
    }

    private static void send(MessageChannel mc, MessageBuffer mb, int n) {
        try {
            mc.send(mb, n);
        } catch (RuntimeException e) {
            mb.release(); // refused before it became the channel's
            throw e;
        }
    }
}
