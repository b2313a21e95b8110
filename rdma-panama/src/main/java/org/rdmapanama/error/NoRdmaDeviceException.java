package org.rdmapanama.error;


/**
 * libibverbs loaded but reported no device: no RDMA NIC, or no driver
 * (rdma_rxe, siw, mlx5_ib, ...) bound to one.
 */
public final class NoRdmaDeviceException extends RdmaException {
    public NoRdmaDeviceException(String message) {
        super(message);
    }
}
