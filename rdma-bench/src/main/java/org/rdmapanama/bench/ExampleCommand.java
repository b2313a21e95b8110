package org.rdmapanama.bench;

import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.RemoteBuffer;
import org.rdmapanama.verbs.SendRequest;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * {@code rdma-bench example}: the README's usage example, runnable. Sends,
 * RDMA-writes and RDMA-reads between a client and a server in one process,
 * on the transport that {@code -Drdma.transport} / {@code RDMA_TRANSPORT} picks.
 */
final class ExampleCommand {
    private ExampleCommand() {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        return CliArgs.run("example", args, out, err, a -> {
            if (a.length > 0) {
                throw new IllegalArgumentException("unexpected argument '" + a[0] + "'");
            }
            return a;
        }, s -> s.println("usage: rdma-bench example   (pick the transport with RDMA_TRANSPORT=iwarp|rocev2|ib)"), a -> {
            out.println(example());
            return CliArgs.OK;
        });
    }

    /** The README example, verbatim between the markers. */
    static String example() throws Exception {
        // --- README example ---
        Selection sel = Selection.select(RdmaConfig.load(), RdmaDevices.list()); // RDMA_TRANSPORT=iwarp, rocev2, ib
        var at = new InetSocketAddress(sel.ipAddress(), 7471);
        var opts = ConnectionOptions.defaults();
        Duration t = Duration.ofSeconds(30);
        try (RdmaListener listener = RdmaListener.bind(at, 1, opts)) {
            Thread server = Thread.ofVirtual().start(() -> {           // the server: 4 KiB peers may read and write
                try (RdmaConnection c = listener.accept(t);
                     ReceiveRequest recv = c.queuePair().newReceiveRequest(1, 1)) {
                    MemoryRegion mr = c.protectionDomain().allocate(4096, Access.REMOTE_READ, Access.REMOTE_WRITE);
                    c.queuePair().postRecv(recv.sge(mr, 0, 64));
                    c.accept(mr.remote().toBytes(), t);                   // address + rkey travel as private data
                    c.awaitDisconnect(t);
                } catch (Exception e) { throw new RuntimeException(e); }
            });
            try (RdmaConnection c = RdmaConnection.resolve(at, null, opts, t);
                 SendRequest wr = c.queuePair().newSendRequest(1, 1); CompletionBatch done = new CompletionBatch(1)) {
                MemoryRegion mine = c.protectionDomain().allocate(4096);
                c.connect(new byte[0], t);
                RemoteBuffer peer = RemoteBuffer.fromBytes(c.peerPrivateData());
                mine.segment().setString(0, "hello over " + sel.transport().displayName());
                for (Opcode op : new Opcode[] {Opcode.SEND, Opcode.RDMA_WRITE, Opcode.RDMA_READ}) {
                    c.queuePair().postSend(wr.opcode(0, op).sge(mine, op == Opcode.RDMA_READ ? 2048 : 0, 64)
                            .remote(peer.at(1024, 64), peer.rkey()));
                    c.completionQueue().pollUntil(done, t);
                    done.requireSuccess(0);
                }
                c.disconnect();
                server.join();
                return mine.segment().getString(2048);                 // read back what was written
            }
        }
        // --- end of README example ---
    }
}
