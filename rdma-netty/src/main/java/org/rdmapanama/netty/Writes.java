package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
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
 * the largest message.
 */
final class Writes implements ChannelOutboundBuffer.MessageProcessor {
    private final ArrayDeque<ByteBuf> batch = new ArrayDeque<>();
    private final ChannelGroup group;
    private final int eagerLimit;
    private final int maxMessage;
    private int total;

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
                } else if (len >= eagerLimit) {
                    int n = Math.min(len, maxMessage);
                    MessageBuffer mb = mc.allocate(n);
                    try {
                        buf.getBytes(buf.readerIndex(), mb.segment().asSlice(0, n).asByteBuffer());
                    } catch (RuntimeException e) {
                        mb.release();
                        throw e;
                    }
                    send(mc, mb, n);
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
