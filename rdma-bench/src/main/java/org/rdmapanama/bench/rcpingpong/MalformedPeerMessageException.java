package org.rdmapanama.bench.rcpingpong;

import org.rdmapanama.error.RdmaException;

/** A peer's out-of-band message was short, oversized or not in the expected format. */
public final class MalformedPeerMessageException extends RdmaException {
    public MalformedPeerMessageException(String message) {
        super(message);
    }
}
