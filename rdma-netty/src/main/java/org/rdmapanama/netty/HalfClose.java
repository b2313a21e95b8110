package org.rdmapanama.netty;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import org.rdmapanama.channel.MessageChannel;

import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetConnectedException;

/**
 * A channel's half-close, as TCP's: {@code shutdownOutput} sends the message
 * channel's SHUT after what was written (the peer reads everything, then its
 * input ends); {@code shutdownInput} drops what comes from here on. The
 * peer's SHUT, once what came before it was read, fires
 * {@link ChannelInputShutdownEvent} with {@code ALLOW_HALF_CLOSURE}, else
 * closes the channel, as Netty does at a TCP end of stream.
 */
final class HalfClose {
    private final RdmaSocketChannel ch;
    private final Reads reads;
    private volatile boolean inputShut;
    private volatile boolean outputShut;
    private boolean readCompleteDue; // ChannelInputShutdownReadComplete, at the next read (event loop)

    HalfClose(RdmaSocketChannel ch, Reads reads) {
        this.ch = ch;
        this.reads = reads;
    }

    boolean inputShut() {
        return inputShut;
    }

    boolean outputShut() {
        return outputShut;
    }

    ChannelFuture shutdownInput(ChannelPromise p) {
        return onLoop(p, () -> {
            inputShut = true;
            p.setSuccess();
            reads.dropAndEnd(); // a close or SHUT of the peer's that waited for those reads happens now
        });
    }

    ChannelFuture shutdownOutput(ChannelPromise p) {
        // Netty's own: it fails what the outbound buffer still holds, then calls doShutdownOutput.
        return onLoop(p, () -> ((RdmaSocketChannel.RdmaUnsafe) ch.unsafe()).shutdownOutput(p));
    }

    ChannelFuture shutdown(ChannelPromise p) {
        shutdownOutput(ch.newPromise()).addListener(out -> shutdownInput(ch.newPromise()).addListener(in -> {
            Throwable cause = out.cause() != null ? out.cause() : in.cause();
            if (cause == null) {
                p.setSuccess();
            } else {
                p.setFailure(cause);
            }
        }));
        return p;
    }

    /** doShutdownOutput, on the event loop: {@code mc} is null unless connected. */
    void shutDownOutput(MessageChannel mc) {
        if (mc == null) {
            throw new NotYetConnectedException();
        }
        outputShut = true;
        mc.shutdownOutput();
    }

    /** The peer's SHUT, once what came before it was read. */
    void peerShut() {
        if (inputShut) {
            ch.pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
        } else if (ch.config().isAllowHalfClosure()) {
            inputShut = true;
            ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            if (ch.config().isAutoRead()) {
                ch.pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
            } else {
                readCompleteDue = true; // as a TCP reader sees the end again at its next read
            }
        } else {
            ch.close();
        }
    }

    /** A read asked for after the input ended: Netty's second end-of-input event. */
    void readAsked() {
        if (readCompleteDue) {
            readCompleteDue = false;
            ch.eventLoop().execute(() -> ch.pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE));
        }
    }

    private ChannelFuture onLoop(ChannelPromise p, Runnable r) {
        if (!ch.isActive()) {
            return p.setFailure(ch.isOpen() ? new NotYetConnectedException() : new ClosedChannelException());
        }
        EventLoop l = ch.eventLoop();
        if (l.inEventLoop()) {
            r.run();
        } else {
            l.execute(r);
        }
        return p;
    }
}
