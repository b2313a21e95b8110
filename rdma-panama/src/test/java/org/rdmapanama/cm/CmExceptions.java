package org.rdmapanama.cm;

/** Makes the CmExceptions that rdma_cm would raise, for tests of the layers above cm. */
public final class CmExceptions {
    private CmExceptions() {}

    public static CmException of(String message, CmEventType event, int status) {
        return new CmException(message, event, status);
    }

    public static CmException timeout(String message) {
        return CmException.timeout(message);
    }
}
