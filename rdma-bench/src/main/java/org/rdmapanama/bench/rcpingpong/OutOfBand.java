package org.rdmapanama.bench.rcpingpong;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.QpAddress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * The TCP exchange of QP addresses that ibv_rc_pingpong does (and perftest
 * without rdma_cm): the client sends its address, the server connects its QP
 * and answers with its own, the client connects and says "done". Every read
 * has a timeout; short, oversized or malformed messages are errors.
 */
public final class OutOfBand {
    private OutOfBand() {}

    private static final byte[] DONE = "done\0".getBytes(StandardCharsets.US_ASCII);

    /** What the server does between reading the client's address and sending its own. */
    @FunctionalInterface
    public interface Connector {
        void connect(QpAddress remote) throws RdmaException;
    }

    /** Client side: returns the server's address. */
    public static QpAddress client(InetSocketAddress server, QpAddress mine, Duration timeout)
            throws IOException {
        try (Socket s = new Socket()) {
            s.connect(server, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            OutputStream out = s.getOutputStream();
            out.write(PingpongWire.encode(mine));
            out.flush();
            QpAddress remote = readAddress(s.getInputStream(), "server " + server);
            out.write(DONE);
            out.flush();
            return remote;
        } catch (SocketTimeoutException e) {
            throw new RdmaException("out-of-band exchange with " + server + " timed out after " + timeout, e);
        }
    }

    /**
     * Server side: accepts one client on {@code listener}, reads its address,
     * calls {@code connector} (bring the QP to RTR/RTS), sends {@code mine},
     * and waits for the client's "done". Returns the client's address.
     */
    public static QpAddress server(ServerSocket listener, QpAddress mine, Connector connector, Duration timeout)
            throws IOException {
        listener.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket s = listener.accept()) {
            s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            QpAddress remote = readAddress(s.getInputStream(), "client " + s.getRemoteSocketAddress());
            connector.connect(remote);
            s.getOutputStream().write(PingpongWire.encode(mine));
            s.getOutputStream().flush();
            byte[] done = new byte[DONE.length];
            int n = s.getInputStream().readNBytes(done, 0, done.length);
            if (n != DONE.length || !Arrays.equals(done, DONE)) {
                throw new MalformedPeerMessageException("client did not confirm with \"done\": got "
                        + PingpongWire.show(done, n));
            }
            return remote;
        } catch (SocketTimeoutException e) {
            throw new RdmaException("out-of-band exchange on port " + listener.getLocalPort() + " timed out after "
                    + timeout, e);
        }
    }

    private static QpAddress readAddress(InputStream in, String peer) throws IOException {
        byte[] msg = new byte[PingpongWire.SIZE];
        int n = in.readNBytes(msg, 0, msg.length);
        if (n == PingpongWire.SIZE && in.available() > 0) {
            throw new MalformedPeerMessageException(peer + " sent more than the " + PingpongWire.SIZE
                    + "-byte address message");
        }
        try {
            return PingpongWire.decode(msg, n);
        } catch (MalformedPeerMessageException e) {
            throw new MalformedPeerMessageException(peer + ": " + e.getMessage());
        }
    }
}
