package org.rdmapanama.bench.perftest;

import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.QpState;
import org.rdmapanama.verbs.QueuePair;

import java.time.Duration;

/**
 * Notices a peer that went away, as native perftest does from its socket: the
 * out-of-band TCP connection closing (EOF or reset), an rdma_cm DISCONNECTED
 * (or DEVICE_REMOVAL) event with {@code -R}, or our QP leaving RTS (where the
 * provider reports it; a failed completion is the data loops' own signal). The wait
 * loops call {@link #check} often; it looks at most every
 * {@link #INTERVAL_NANOS}, so a timed loop pays one comparison.
 * <p>
 * A signal is acted on only after {@link #GRACE_NANOS}: at the end of a run
 * the peer leaves as soon as it is past the last barrier, and its control
 * write may land (siw completes a Write once it is sent) just after its
 * socket closes. A loop that finishes within the grace never throws.
 */
final class PerftestPeerWatch {
    static final long INTERVAL_NANOS = Duration.ofMillis(100).toNanos();
    static final long GRACE_NANOS = Duration.ofMillis(300).toNanos();

    private final PerftestExchange tcp;
    private final RdmaConnection cm;
    private final QueuePair qp;
    /** siw's ibv_query_qp leaves the state unset (it reads as RESET): its QP state tells nothing. */
    private final boolean qpStateKnown;
    private long lastCheck = System.nanoTime();
    private String gone;
    private long goneAt;

    /** tcp: perftest's exchange, kept open (no -R); cm: the connection (-R). */
    PerftestPeerWatch(PerftestExchange tcp, RdmaConnection cm, QueuePair qp) {
        this.tcp = tcp;
        this.cm = cm;
        this.qp = qp;
        QpState s;
        try {
            s = qp.state();
        } catch (RdmaException e) {
            s = QpState.UNKNOWN;
        }
        this.qpStateKnown = s == QpState.RTS;
    }

    /** Throws once a signal seen at least {@link #GRACE_NANOS} ago says the peer is gone. */
    void check(long now) throws RdmaException {
        if (now - lastCheck < INTERVAL_NANOS) {
            return;
        }
        lastCheck = now;
        if (gone == null) {
            gone = look();
            goneAt = now;
        }
        if (gone != null && now - goneAt >= GRACE_NANOS) {
            throw new RdmaException(ended() + " during the run");
        }
    }

    /**
     * What to throw for a failed completion: it often comes first (siw flushes the QP when the
     * peer's TCP stream closes), so look a little longer for the signal that names the cause.
     */
    RdmaException completionFailed(RdmaException e) {
        long until = System.nanoTime() + 2 * GRACE_NANOS;
        try {
            while (gone == null && System.nanoTime() - until < 0) {
                gone = look();
                if (gone == null) {
                    Thread.sleep(20);
                }
            }
        } catch (RdmaException other) {
            // the completion's own error is the one to report
        } catch (InterruptedException other) {
            Thread.currentThread().interrupt();
        }
        return gone != null
                ? new RdmaException(ended() + " during the run; " + e.getMessage(), e)
                : new RdmaException("the QP failed during the run: " + e.getMessage(), e);
    }

    /** The peer's connection closing names the peer; our QP in error may as well be our port going down. */
    private String ended() {
        return (gone.startsWith("our QP") ? "the connection failed (" : "the peer went away (") + gone + ")";
    }

    private String look() throws RdmaException {
        if (tcp != null) {
            String why = tcp.peerGone(); // keeps early bytes (a native peer's last handshake) for the exchange
            if (why != null) {
                return why;
            }
        }
        if (cm != null) {
            try {
                CmEventType ev = cm.awaitEvent(Duration.ZERO);
                if (ev == CmEventType.DISCONNECTED || ev == CmEventType.DEVICE_REMOVAL) {
                    return "rdma_cm reported " + ev;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        if (qpStateKnown) {
            QpState s = qp.state();
            if (s != QpState.RTS) {
                return "our QP left RTS for " + s;
            }
        }
        return null;
    }
}
