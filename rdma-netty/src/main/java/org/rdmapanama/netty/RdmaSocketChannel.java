package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.AbstractChannel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.Future;
import org.rdmapanama.channel.ChannelRequest;
import org.rdmapanama.channel.DrivenLoop;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.channel.MessageHandler;
import org.rdmapanama.error.RdmaException;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A Netty channel over a {@link MessageChannel}: each received message is one
 * read (a {@link ReceivedBuf} view of it), and writes go as {@link Writes}
 * says: the allocator's buffers where they lie, the rest copied. It is a
 * {@link SocketChannel} because code written for TCP says so
 * ({@code ChannelInitializer<SocketChannel>}). Every message-channel callback
 * runs on the Netty event loop the channel is registered with.
 */
public final class RdmaSocketChannel extends AbstractChannel implements SocketChannel {
    private static final ChannelMetadata METADATA = new ChannelMetadata(false, 16);

    private final RdmaSocketChannelConfig config;
    private ChannelRequest request; // an accepted child's, answered once it is registered
    private final Reads reads = new Reads(this);
    private final HalfClose halfClose = new HalfClose(this, reads);
    Writes writes; // made at the first write; tests read its copied()
    private IoRegistration registration;
    private RdmaIoHandler handler; // the registration's attachment
    private MessageChannel channel;
    private volatile boolean open = true;
    private volatile boolean active;
    private volatile InetSocketAddress remote;
    private volatile InetSocketAddress local;
    private boolean listed; // in the handler's list of channels whose reads wait for channelReadComplete
    private ChannelPromise connectPromise;
    private Future<?> connectTimeout;
    private CompletableFuture<MessageChannel> connecting;

    /** A client channel, for {@code Bootstrap.channel(RdmaSocketChannel.class)}. */
    public RdmaSocketChannel() {
        super(null);
        config = new RdmaSocketChannelConfig(this, -1);
    }

    RdmaSocketChannel(RdmaServerSocketChannel parent, ChannelRequest request) {
        super(parent);
        this.request = request;
        config = new RdmaSocketChannelConfig(this, -1);
    }

    @Override public ServerSocketChannel parent() { return (ServerSocketChannel) super.parent(); }
    @Override public RdmaSocketChannelConfig config() { return config; }
    @Override public ChannelMetadata metadata() { return METADATA; }
    @Override public boolean isOpen() { return open; }
    @Override public boolean isActive() { return active; }
    @Override public InetSocketAddress localAddress() { return (InetSocketAddress) super.localAddress(); }
    @Override public InetSocketAddress remoteAddress() { return (InetSocketAddress) super.remoteAddress(); }
    @Override protected SocketAddress localAddress0() { return local; }
    @Override protected SocketAddress remoteAddress0() { return remote; }

    @Override public boolean isInputShutdown() { return halfClose.inputShut() || !active; }
    @Override public boolean isOutputShutdown() { return halfClose.outputShut() || !active; }
    @Override public boolean isShutdown() { return isInputShutdown() && isOutputShutdown(); }
    @Override public ChannelFuture shutdownInput() { return shutdownInput(newPromise()); }
    @Override public ChannelFuture shutdownOutput() { return shutdownOutput(newPromise()); }
    @Override public ChannelFuture shutdown() { return shutdown(newPromise()); }
    @Override public ChannelFuture shutdownInput(ChannelPromise p) { return halfClose.shutdownInput(p); }
    @Override public ChannelFuture shutdownOutput(ChannelPromise p) { return halfClose.shutdownOutput(p); }
    @Override public ChannelFuture shutdown(ChannelPromise p) { return halfClose.shutdown(p); }

    @Override
    protected void doShutdownOutput() {
        halfClose.shutDownOutput(active ? channel : null);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new RdmaUnsafe();
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop l && l.isCompatible(RdmaUnsafe.class);
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        ((IoEventLoop) eventLoop()).register((RdmaUnsafe) unsafe()).addListener(f -> {
            if (!f.isSuccess()) {
                promise.setFailure(f.cause());
                return;
            }
            registration = (IoRegistration) f.getNow();
            handler = registration.attachment();
            config.defaultAllocator(handler.transport().allocator());
            if (config.getMaxHeldViews() < 0) {
                config.setMaxHeldViews(handler.transport().options().window() / 2);
            }
            promise.setSuccess();
            if (request != null) {
                accept();
            }
        });
    }

    /** An accepted child, now on its loop: the peer's request is answered there. */
    private void accept() {
        ChannelRequest r = request;
        request = null;
        DrivenLoop loop;
        try {
            loop = handler.loop();
        } catch (RdmaException | RuntimeException e) {
            r.reject();
            failAndClose(e);
            return;
        }
        r.accept(loop, (RdmaUnsafe) unsafe()).whenComplete((mc, e) -> {
            if (e != null) {
                eventLoop().execute(() -> failAndClose(ConnectErrors.unwrap(e)));
            }
        });
    }

    private void failAndClose(Throwable cause) {
        if (open) {
            pipeline().fireExceptionCaught(cause);
            unsafe().close(voidPromise());
        }
    }

    @Override
    protected void doDeregister() {
        IoRegistration r = registration;
        if (r != null) {
            registration = null;
            r.cancel();
        }
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
        throw new UnsupportedOperationException("an RDMA client channel's address is its device's: connect without bind");
    }

    @Override
    protected void doDisconnect() {
        doClose();
    }

    @Override
    protected void doClose() {
        open = false;
        active = false;
        ChannelPromise p = connectPromise;
        if (p != null) {
            connectPromise = null;
            p.tryFailure(new ClosedChannelException());
        }
        cancelConnectTimeout();
        if (connecting != null && !connecting.isDone()) {
            connecting.cancel(false); // a channel that opens anyway is aborted in onOpen
        }
        MessageChannel mc = channel;
        if (mc != null) {
            if (config.getSoLinger() == 0) {
                mc.abort(new ClosedChannelException());
            } else {
                mc.close();
            }
        }
        if (request != null) {
            request.reject();
            request = null;
        }
        reads.releaseAll();
    }

    private void cancelConnectTimeout() {
        if (connectTimeout != null) {
            connectTimeout.cancel(false);
            connectTimeout = null;
        }
    }

    @Override
    protected void doBeginRead() {
        halfClose.readAsked();
        reads.begin();
    }

    void clearReadPending() {
        if (!isRegistered()) {
            reads.clearPending(); // an option set before registration (a ServerBootstrap's childOption)
        } else if (eventLoop().inEventLoop()) {
            reads.clearPending();
        } else {
            eventLoop().execute(reads::clearPending);
        }
    }

    @Override
    protected Object filterOutboundMessage(Object msg) {
        if (msg instanceof ByteBuf) {
            return msg;
        }
        throw new UnsupportedOperationException("RDMA channels write ByteBufs, not " + msg.getClass().getName());
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
        if (writes == null) {
            var o = handler.transport().options();
            writes = new Writes(handler.transport().group(), o.eagerLimit(), o.maxMessageSize());
        }
        writes.write(channel, in);
        channel.flushNow(); // a flush is on the wire when it returns, as over a socket
    }

    /** Netty's channel events from the message channel, and its IoHandle; everything here on the event loop. */
    final class RdmaUnsafe extends AbstractUnsafe implements RdmaIoHandle, MessageHandler {
        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            if (promise.isDone() || !ensureOpen(promise)) {
                return;
            }
            if (connectPromise != null) {
                promise.setFailure(new ConnectionPendingException());
                return;
            }
            if (channel != null) {
                promise.setFailure(new AlreadyConnectedException());
                return;
            }
            if (!(remoteAddress instanceof InetSocketAddress to) || to.isUnresolved()) {
                promise.setFailure(new UnsupportedAddressTypeException());
                return;
            }
            DrivenLoop loop;
            try {
                loop = handler.loop();
            } catch (RdmaException | RuntimeException e) {
                promise.setFailure(e);
                return;
            }
            connectPromise = promise;
            promise.addListener(ChannelFutureListener.CLOSE_ON_FAILURE); // cancellable, as NIO's: a cancel abandons it
            remote = to;
            int ms = config.getConnectTimeoutMillis();
            var group = handler.transport().group();
            // The runtime's timeout bounds each set-up step; the one scheduled below is Netty's, for the whole.
            connecting = ms > 0 ? group.connect(to, this, loop, Duration.ofMillis(ms)) : group.connect(to, this, loop);
            connecting.whenComplete((mc, e) -> {
                if (e != null) {
                    eventLoop().execute(() -> connectFailed(ConnectErrors.unwrap(e)));
                }
            });
            if (ms > 0 && connectPromise != null) {
                connectTimeout = eventLoop().schedule(() -> connectFailed(
                        new ConnectTimeoutException("connection timed out after " + ms + " ms: " + to)),
                        ms, TimeUnit.MILLISECONDS);
            }
        }

        private void connectFailed(Throwable e) {
            ChannelPromise p = connectPromise;
            if (p == null) {
                return; // done already: opened, timed out or closed
            }
            connectPromise = null;
            cancelConnectTimeout();
            Throwable cause = ConnectErrors.asConnectException(e);
            // Netty's annotation makes a plain ConnectException of it: a timeout goes as it is, as over NIO.
            p.tryFailure(cause instanceof ConnectTimeoutException ? cause : annotateConnectException(cause, remote));
            close(voidPromise());
        }

        @Override
        protected void flush0() {
            if (connectPromise == null) { // writes before the connect completes wait for it
                super.flush0();
            }
        }

        @Override
        public void onOpen(MessageChannel mc) {
            if (!open) {
                mc.abort(new ClosedChannelException()); // closed, or timed out, while connecting
                return;
            }
            channel = mc;
            try {
                local = mc.connection().localAddress();
                remote = mc.connection().peerAddress();
            } catch (RdmaException e) {
                mc.abort(e); // a route the cm cannot tell us about: nothing else would work either
                failAndClose(e);
                return;
            }
            active = true;
            ChannelPromise p = connectPromise;
            if (p == null) {
                pipeline().fireChannelActive(); // an accepted child
                return;
            }
            connectPromise = null;
            cancelConnectTimeout();
            boolean promised = p.trySuccess();
            pipeline().fireChannelActive();
            if (!promised) {
                close(voidPromise());
                return;
            }
            flush0(); // what was written while connecting
        }

        @Override
        public void onMessage(MessageChannel mc, Message message) {
            if (!open || halfClose.inputShut()) {
                message.release();
                return;
            }
            reads.add(message);
            if (!listed) {
                listed = true;
                handler.readsFired(this);
            }
        }

        @Override
        public void readsDone() {
            listed = false;
            reads.drain();
        }

        @Override
        public void onWritabilityChanged(MessageChannel mc) {
            if (mc.isWritable()) {
                flush0();
            }
        }

        @Override
        public void onClose(MessageChannel mc, Throwable cause) {
            if (mc != channel || !open) {
                return; // an attempt that never opened, or our own close
            }
            if (eventLoop().isShutdown()) {
                // The loop's last drain (RdmaIoHandler.destroy): it takes no tasks, so no events can be fired.
                open = false;
                active = false;
                reads.releaseAll();
                return;
            }
            if (cause != null) {
                pipeline().fireExceptionCaught(cause);
            } else if (reads.endWhenDrained(RdmaSocketChannel.this::close)) {
                return; // closed once the reader has read what came before the peer's close
            }
            close(voidPromise());
        }

        @Override
        public void onInputShutdown(MessageChannel mc) {
            if (mc == channel && open && !reads.endWhenDrained(halfClose::peerShut)) {
                halfClose.peerShut();
            }
        }

        @Override
        public void close() {
            close(voidPromise());
        }
    }
}
