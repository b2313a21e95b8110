package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A test peer's handler: the reads and bytes it got, in order into a CRC, and a wait for a byte count. */
@ChannelHandler.Sharable
final class CrcSink extends ChannelInboundHandlerAdapter {
    final CRC32 crc = new CRC32();
    private final int seconds;
    private long bytes;
    int reads;

    CrcSink(int seconds) {
        this.seconds = seconds;
    }

    @Override
    public synchronized void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf b = (ByteBuf) msg;
        reads++;
        bytes += b.readableBytes();
        crc.update(b.nioBuffer());
        b.release();
        notifyAll();
    }

    synchronized void reset() {
        crc.reset();
        bytes = 0;
        reads = 0;
    }

    /** Waits until {@code n} bytes were read, and fails if more came. */
    synchronized void await(long n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (bytes < n) {
            long left = until - System.nanoTime();
            assertTrue(left > 0, "read " + bytes + " of " + n + " bytes in " + seconds + " s");
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        assertEquals(n, bytes, "no more bytes than were written");
    }
}
