package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;

/** A peer sent what the channel protocol does not allow; the message names the field and its value. */
public final class ProtocolException extends RdmaException {
    public ProtocolException(String message) {
        super(message);
    }
}
