package org.rdmapanama.netty;

import io.netty.channel.AbstractServerChannel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.ServerSocketChannel;
import org.rdmapanama.channel.ChannelRequest;
import org.rdmapanama.channel.ChannelServer;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;

/**
 * A listening channel: each peer's request becomes a child
 * {@link RdmaSocketChannel} read from here, as an accepted socket is. The
 * request is answered only when the child registers on the worker loop Netty
 * picked for it, so that its queue pair uses that loop's completion queue.
 * Binding to the wildcard address listens on the transport's device address.
 */
public final class RdmaServerSocketChannel extends AbstractServerChannel implements ServerSocketChannel {
    private final RdmaServerSocketChannelConfig config = new RdmaServerSocketChannelConfig(this);
    private final ArrayDeque<ChannelRequest> requests = new ArrayDeque<>();
    private IoRegistration registration;
    private RdmaIoHandler handler; // the registration's attachment
    private volatile ChannelServer server;
    private volatile boolean open = true;
    private boolean readPending;

    public RdmaServerSocketChannel() {
    }

    @Override public RdmaServerSocketChannelConfig config() { return config; }
    @Override public boolean isOpen() { return open; }
    @Override public boolean isActive() { return open && server != null; }
    @Override public InetSocketAddress localAddress() { return (InetSocketAddress) super.localAddress(); }
    @Override public InetSocketAddress remoteAddress() { return null; }
    @Override protected SocketAddress localAddress0() { ChannelServer s = server; return s == null ? null : s.address(); }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new ServerUnsafe();
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop l && l.isCompatible(ServerUnsafe.class);
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        ((IoEventLoop) eventLoop()).register((ServerUnsafe) unsafe()).addListener(f -> {
            if (f.isSuccess()) {
                registration = (IoRegistration) f.getNow();
                handler = registration.attachment();
                promise.setSuccess();
            } else {
                promise.setFailure(f.cause());
            }
        });
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
    protected void doBind(SocketAddress localAddress) throws Exception {
        if (!(localAddress instanceof InetSocketAddress at)) {
            throw new java.nio.channels.UnsupportedAddressTypeException();
        }
        RdmaTransport t = handler.transport();
        if (at.getAddress() == null || at.getAddress().isAnyLocalAddress()) {
            at = new InetSocketAddress(t.address(), at.getPort());
        }
        // Requests come on the connection manager's thread; the event loop takes them.
        server = t.group().listen(at, r -> eventLoop().execute(() -> onRequest(r)));
    }

    private void onRequest(ChannelRequest r) {
        if (!isActive()) {
            r.reject();
            return;
        }
        requests.add(r);
        drain();
    }

    @Override
    protected void doBeginRead() {
        readPending = true;
        drain();
    }

    /** Each request becomes a child, fired as a read (ServerBootstrap registers it on a worker). */
    private void drain() {
        if (!readPending || requests.isEmpty()) {
            return;
        }
        RecvByteBufAllocator.Handle h = unsafe().recvBufAllocHandle();
        h.reset(config);
        ChannelPipeline p = pipeline();
        do {
            ChannelRequest r = requests.poll();
            if (r == null) {
                break;
            }
            readPending = false;
            h.incMessagesRead(1);
            p.fireChannelRead(new RdmaSocketChannel(this, r));
        } while (h.continueReading());
        h.readComplete();
        p.fireChannelReadComplete();
    }

    @Override
    protected void doClose() throws Exception {
        open = false;
        ChannelRequest r;
        while ((r = requests.poll()) != null) {
            r.reject();
        }
        ChannelServer s = server;
        if (s != null) {
            s.close();
        }
    }

    private final class ServerUnsafe extends AbstractUnsafe implements RdmaIoHandle {
        @Override
        public void connect(SocketAddress remote, SocketAddress local, ChannelPromise promise) {
            promise.setFailure(new UnsupportedOperationException("a server channel does not connect"));
        }

        @Override
        public void readsDone() {
        }

        @Override
        public void close() {
            close(voidPromise());
        }
    }
}
