package org.rdmapanama.error;

/**
 * An operation the QP's transport or device cannot do (atomics or immediate
 * data on iWARP, too many SGEs for an RDMA Read, RDMA on UD), refused before
 * anything is posted.
 */
public final class TransportCapabilityException extends UnsupportedOperationException {
    public TransportCapabilityException(String message) {
        super(message);
    }
}
