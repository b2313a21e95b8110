package org.rdmapanama.netty;

import io.netty.channel.ConnectTimeoutException;
import org.rdmapanama.cm.CmException;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;

/** A failed set-up as TCP code expects it: a {@link ConnectException}, a {@link ConnectTimeoutException} when out of time. */
final class ConnectErrors {
    private static final int ETIMEDOUT = 110; // Linux

    private ConnectErrors() {}

    /** Refused, unreachable, no route, or an rdma_cm step that ran out of time. */
    static Throwable asConnectException(Throwable e) {
        if (e instanceof ConnectException) {
            return e;
        }
        ConnectException c = timedOut(e) ? new ConnectTimeoutException(e.getMessage()) : new ConnectException(e.getMessage());
        c.initCause(e);
        return c;
    }

    /** Our own step deadline, or the kernel's (an ADDR_ERROR or UNREACHABLE event with ETIMEDOUT). */
    private static boolean timedOut(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof CmException cm && (cm.isTimeout() || cm.errno() == ETIMEDOUT)) {
                return true;
            }
        }
        return false;
    }

    static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
