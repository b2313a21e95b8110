package org.rdmapanama.nettybench;

import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.channel.MessageHandler;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The same echo on rdma-panama's message channel, without Netty: the server copies each request into a
 * buffer of the pool and sends it back (as the guide's echo server does), the client keeps W requests
 * outstanding per channel from the group's one loop thread. Options are those of the Netty RDMA side.
 */
@SuppressWarnings("try") // the server is held by the try, used by no statement; close() may be interrupted
final class ChannelEcho {
    private ChannelEcho() {}

    /** Listens on {@code port}; a client's STOP completes {@code stop}. Closing it closes the server and its group. */
    static AutoCloseable start(Endpoint e, int port, CompletableFuture<Void> stop) throws Exception {
        ChannelGroup group = ChannelGroup.open(e.config(), e.channelOptions());
        try {
            ChannelServer server = group.listen(new InetSocketAddress(group.address(), port), (ch, m) -> {
                 int len = m.length();
                 int op = len >= 4 ? m.segment().get(JAVA_INT_UNALIGNED, 0) : 0;
                 if (op == Wire.ECHO) {
                     MessageBuffer reply = ch.allocate(len);
                     MemorySegment.copy(m.segment(), 0, reply.segment(), 0, len);
                     m.release();
                     ch.send(reply, len);
                     return;
                 }
                 m.release();
                 MessageBuffer reply = ch.allocate(12);
                 reply.segment().set(JAVA_INT_UNALIGNED, 0, op);
                 reply.segment().set(JAVA_LONG_UNALIGNED, 4, Wire.answer(op));
                 ch.send(reply, 12);
                 if (op == Wire.STOP) {
                     stop.complete(null);
                 }
             });
            return () -> {
                server.close();
                group.close();
            };
        } catch (Exception x) {
            group.close();
            throw x;
        }
    }

    /** The client: channels on the group's one loop, each with its {@link Load.Lane} as attachment. */
    static final class Client implements Driver, MessageHandler {
        private final ChannelGroup group;
        private final InetSocketAddress server;
        private final List<MessageChannel> channels = new ArrayList<>();
        private final Load load = new Load();
        private int size;
        private CompletableFuture<Long> control;

        Client(Endpoint e, InetSocketAddress server) throws Exception {
            this.group = ChannelGroup.open(e.config(), e.channelOptions());
            this.server = server;
        }

        @Override
        public List<String> series() {
            return List.of(Side.CHANNEL.label);
        }

        @Override
        public void connect(int n) throws Exception {
            while (channels.size() < n) {
                MessageChannel ch = group.connect(server, this).get(30, TimeUnit.SECONDS);
                ch.attach(new Load.Lane(Load.MAX_OUTSTANDING));
                channels.add(ch);
            }
        }

        @Override
        public CompletableFuture<Load> run(int mode, Result.Case c, long nanos, boolean record) {
            CompletableFuture<Load> f = new CompletableFuture<>();
            channels.getFirst().execute(() -> {
                size = c.bytes();
                load.begin(record, nanos, c.connections()).whenComplete((l, x) -> {
                    if (x != null) f.completeExceptionally(x); else f.complete(l);
                });
                for (int i = 0; i < c.connections(); i++) {
                    MessageChannel ch = channels.get(i);
                    Load.Lane lane = (Load.Lane) ch.attachment();
                    load.enter(lane);
                    for (int k = 0; k < c.window(); k++) {
                        issue(ch, lane);
                    }
                }
            });
            return f;
        }

        private void issue(MessageChannel ch, Load.Lane lane) {
            try {
                MessageBuffer b = ch.allocate(size);
                b.segment().set(JAVA_INT_UNALIGNED, 0, Wire.ECHO);
                load.issued(lane, System.nanoTime());
                ch.send(b, size);
            } catch (Exception e) {
                load.fail(e);
            }
        }

        @Override
        public void onMessage(MessageChannel ch, Message m) {
            long now = System.nanoTime();
            int len = m.length();
            int op = len >= 4 ? m.segment().get(JAVA_INT_UNALIGNED, 0) : 0;
            long value = op != Wire.ECHO && len >= 12 ? m.segment().get(JAVA_LONG_UNALIGNED, 4) : 0;
            m.release();
            Load.Lane lane = (Load.Lane) ch.attachment();
            if (op != Wire.ECHO) {
                if (control != null) {
                    control.complete(value);
                }
            } else if (len != size) {
                load.fail(new IllegalStateException("a reply of " + len + " B to a request of " + size + " B"));
            } else if (load.reply(lane, now)) {
                issue(ch, lane);
            }
        }

        @Override
        public void onClose(MessageChannel ch, Throwable cause) {
            IllegalStateException e = new IllegalStateException(ch + " closed", cause);
            load.fail(e);
            if (control != null) {
                control.completeExceptionally(e);
            }
        }

        @Override
        public long serverCpu(boolean stop) throws Exception {
            return ask(stop ? Wire.STOP : Wire.CPU);
        }

        @Override
        public long serverJit() throws Exception {
            return ask(Wire.JIT);
        }

        private long ask(int op) throws Exception {
            CompletableFuture<Long> f = new CompletableFuture<>();
            MessageChannel first = channels.getFirst();
            first.execute(() -> {
                control = f;
                try {
                    MessageBuffer b = first.allocate(4);
                    b.segment().set(JAVA_INT_UNALIGNED, 0, op);
                    first.send(b, 4);
                } catch (Exception e) {
                    f.completeExceptionally(e);
                }
            });
            return f.get(30, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws Exception {
            for (MessageChannel ch : channels) {
                ch.close();
            }
            for (MessageChannel ch : channels) {
                try {
                    ch.closeFuture().get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // the server may have gone first (STOP): its disconnect ends the channel
                }
            }
            group.close();
        }
    }
}
